"""``ladder view DIR [--port P]``: the run's cells, episodes and turns in a local web page.

Served on loopback only (127.0.0.1) by :mod:`runner.viewer.app`; the page's files ship in the
package and nothing is fetched from outside. The index is built before the page is served
and cached in DIR (``view-index.msgpack``), a large one in the background while the page
shows what is in so far (#50); each request indexes what the logs gained since.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated

import typer

from ladder.domain import load_packs_of
from ladder.errors import UsageError
from runner.files import NotRegularFile
from runner.rundir.errors import check_logdir
from runner.rundir.logs import NewerSchemaError, log_files
from runner.rundir.manifest import MANIFEST
from runner.viewer.data import RunView

__all__ = ["view"]


def _index(view: RunView) -> None:
    """Build (or grow) the cached index before the first page asks for it; a large one is
    built in the background while the page shows what is in so far (#50)."""
    t = time.perf_counter()
    view.index.refresh(wait=False)
    progress = view.index.progress()
    if progress is not None:
        typer.echo(
            f"indexing {progress.total} log files in the background; the page shows the "
            "episodes indexed so far and fills as they come"
        )
        return
    view.cells()
    total = sum(len(view.index.entries(s)) for s in view.index.slugs())
    typer.echo(
        f"indexed {total} episodes ({view.index.scanned} read now) in "
        f"{time.perf_counter() - t:.1f} s; cached in {view.index.path}"
    )


async def _serve(views: list[RunView], port: int) -> None:
    from runner.viewer.app import serve

    runner, url = await serve(views, port)
    typer.echo(f"ladder view: {url}  (Ctrl-C stops)")
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def view(
    logdirs: Annotated[
        list[Path],
        typer.Argument(
            help="A run directory (or its logs/ folder); several: one page, a picker.",
            metavar="LOGDIR...",
        ),
    ],
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0: any free).")] = 8765,
) -> None:
    """Serve a local web page over LOGDIR: the cells with strict and decline-aware success,
    CIs, channels and cost; each cell's episodes (failed only, by channel, by seed); each
    episode turn by turn; the same seed under two arms side by side."""
    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be in 0..65535 (got {port})")
    for logdir in logdirs:
        check_logdir(logdir)  # the line of every reader of a run (ladder.early)
        load_packs_of(logdir)  # the file domain packs the run's episodes regenerate with
        run_dir = logdir.parent if logdir.name == "logs" else logdir
        if not log_files(logdir) and not (run_dir / MANIFEST).is_file():
            raise UsageError(
                f"{logdir} is not a run directory (no manifest.json, no episode logs); give "
                "the --out of a `ladder run` or `ladder demo`"
            )
        if not log_files(logdir):
            typer.echo(f"note: no episode logs under {logdir} yet; reload the page when some land")
    try:
        views = [RunView(logdir, background=True) for logdir in logdirs]
        for view in views:
            _index(view)
        asyncio.run(_serve(views, port))
    except KeyboardInterrupt:
        pass
    except (NewerSchemaError, NotRegularFile) as e:  # a planted FIFO or link: one line (#47)
        raise UsageError(str(e)) from None
    except OSError as e:
        raise UsageError(f"cannot serve on 127.0.0.1:{port}: {e.strerror or e}") from None
