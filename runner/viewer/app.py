"""``ladder view``'s web app: a JSON API over :class:`runner.viewer.data.RunView` and the static
page (``runner/viewer/static``: plain HTML, CSS and JavaScript, nothing fetched from outside).

Routes (all GET):

* ``/``: the page; ``/static/...``: its files; ``/favicon.ico``: its icon.
* ``/api/cells``: the cells (strict and decline-aware success with CIs, channels, cost) and
  the contrasts.
* ``/api/episodes?cell=SLUG[&failed=strict|decline_aware][&channel=C][&seed=N][&trial=K]``:
  a cell's episodes (every trial of each seed, --trials).
* ``/api/episode?cell=SLUG&seed=N[&trial=K]``: one episode turn by turn (trial K of the
  seed, --trials; 0 by default).
* ``/api/compare?seed=N&a=SLUG&b=SLUG[&trial=K]``: the same seed (and trial) under two
  cells, side by side.

Every request refreshes the index first (new episodes of a run in progress appear on reload).
A large refresh (a first index of a large run) runs in the background: ``/api/cells`` then
answers at once with the episodes indexed so far and ``indexing`` (files indexed of the total,
episodes so far), the page asking again each second until it is gone (#50).
Bad parameters answer 400, an unknown cell or seed 404, each with ``{"error": ...}``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import msgspec
from aiohttp import web

from protocol.state.machine import CHANNELS, RULE_CHANNELS
from runner.files import NotRegularFile
from runner.rundir.logs import NewerSchemaError
from runner.viewer.data import RunView
from scoring.results.cells import SCORINGS

__all__ = ["LOOPBACK", "STATIC", "make_app", "serve"]

STATIC = Path(__file__).parent / "static"
LOOPBACK = "127.0.0.1"
_VIEWS: web.AppKey[list[RunView]] = web.AppKey("views", list)


def _view(request: web.Request) -> RunView:
    """The run a request names (``?run=i``, 0 by default; #40: several runs in one view)."""
    views = request.app[_VIEWS]
    i = _int(request, "run") or 0
    if not 0 <= i < len(views):
        raise _BadRequest(f"no run {i} (this view holds {len(views)})")
    return views[i]


class _BadRequest(ValueError):
    pass


_ENCODER = msgspec.json.Encoder()
_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _json(data: msgspec.Struct, status: int = 200) -> web.Response:
    """A view (:mod:`scoring.display.models`) as the page reads it."""
    return web.Response(body=_ENCODER.encode(data), status=status, content_type="application/json")


def _error(message: str, status: int) -> web.Response:
    return web.json_response({"error": message}, status=status)


def _int(request: web.Request, name: str, required: bool = False) -> int | None:
    raw = request.query.get(name, "")
    if not raw:
        if required:
            raise _BadRequest(f"missing parameter {name}")
        return None
    try:
        return int(raw)
    except ValueError:
        raise _BadRequest(f"{name} must be an integer (got {raw!r})") from None


def _choice(request: web.Request, name: str, allowed: tuple[str, ...]) -> str | None:
    raw = request.query.get(name, "")
    if raw and raw not in allowed:
        raise _BadRequest(f"{name} must be one of {', '.join(allowed)} (got {raw!r})")
    return raw or None


def _required(request: web.Request, name: str) -> str:
    raw = request.query.get(name, "")
    if not raw:
        raise _BadRequest(f"missing parameter {name}")
    return raw


# The page loads its own script, style and icon and fetches its own API: nothing else runs
# (model-written text is inserted as text; this is the second wall).
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})


def _host_name(host: str) -> str:
    """The name of a Host header without its port (``[::1]:8080`` -> ``[::1]``)."""
    if host.startswith("["):
        return host.partition("]")[0] + "]"
    return host.rpartition(":")[0] if host.count(":") == 1 else host


@web.middleware
async def _errors(request: web.Request, handler: _Handler) -> web.StreamResponse:
    # DNS rebinding: a page of another site whose name resolves to 127.0.0.1 sends its own
    # name as Host; only loopback names are answered.
    if _host_name(request.headers.get("Host", "").lower()) not in LOOPBACK_NAMES:
        response: web.StreamResponse = _error("this viewer answers loopback names only", 403)
    else:
        try:
            response = await handler(request)
        except _BadRequest as e:
            response = _error(str(e), 400)
        except (NotRegularFile, NewerSchemaError) as e:  # found by a build in the background
            response = _error(str(e), 500)
        except web.HTTPException as e:  # 404 and the like carry the headers too
            e.headers.update(_SECURITY_HEADERS)
            raise
    response.headers.update(_SECURITY_HEADERS)
    return response


async def _page(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "index.html")


async def _favicon(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "favicon.svg")


async def _cells(request: web.Request) -> web.Response:
    return _json(_view(request).cells())


async def _episodes(request: web.Request) -> web.Response:
    slug = _required(request, "cell")
    data = _view(request).episodes(
        slug,
        failed=_choice(request, "failed", SCORINGS),
        channel=_choice(request, "channel", (*CHANNELS, *RULE_CHANNELS)),  # the rules' (#48)
        seed=_int(request, "seed"),
        trial=_int(request, "trial"),
    )
    return _json(data) if data is not None else _error(f"no cell {slug}", 404)


def _trial(request: web.Request) -> int:
    """The ``trial`` parameter (0 when absent): which trial of the seed (--trials)."""
    trial = _int(request, "trial") or 0
    if trial < 0:
        raise _BadRequest(f"trial must be at least 0 (got {trial})")
    return trial


def _unit(seed: int, trial: int) -> str:
    return f"seed {seed}" + (f" trial {trial}" if trial else "")


async def _episode(request: web.Request) -> web.Response:
    slug, seed = _required(request, "cell"), _int(request, "seed", required=True)
    assert seed is not None
    trial = _trial(request)
    data = _view(request).episode(slug, seed, trial)
    if data is None:
        return _error(f"no episode of {_unit(seed, trial)} in cell {slug}", 404)
    return _json(data)


async def _compare(request: web.Request) -> web.Response:
    seed = _int(request, "seed", required=True)
    assert seed is not None
    a, b = _required(request, "a"), _required(request, "b")
    trial = _trial(request)
    data = _view(request).compare(seed, a, b, trial)
    if data is None:
        return _error(f"{_unit(seed, trial)} is not logged in both {a} and {b}", 404)
    return _json(data)


async def _runs(request: web.Request) -> web.Response:
    runs = [str(v.run_dir) for v in request.app[_VIEWS]]
    return web.json_response({"runs": runs})


async def _close(app: web.Application) -> None:
    for view in app[_VIEWS]:
        view.index.close()  # a build in the background stops


def make_app(run_dir: Path | Sequence[Path | RunView]) -> web.Application:
    """The viewer's application over one run directory or several (each picked by the
    page's ``?run=i``; the index is built on first use, a large one in the background, the
    overview filling as it goes, #50)."""
    dirs = [run_dir] if isinstance(run_dir, Path) else list(run_dir)
    app = web.Application(middlewares=[_errors])
    app[_VIEWS] = [d if isinstance(d, RunView) else RunView(d, background=True) for d in dirs]
    app.on_cleanup.append(_close)
    app.router.add_get("/", _page)
    app.router.add_get("/api/runs", _runs)
    app.router.add_get("/favicon.ico", _favicon)
    app.router.add_get("/api/cells", _cells)
    app.router.add_get("/api/episodes", _episodes)
    app.router.add_get("/api/episode", _episode)
    app.router.add_get("/api/compare", _compare)
    app.router.add_static("/static", STATIC)
    return app


async def serve(run_dir: Path | Sequence[Path | RunView], port: int) -> tuple[web.AppRunner, str]:
    """Start the viewer on loopback; returns the runner (to clean up) and the page's URL."""
    runner = web.AppRunner(make_app(run_dir), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, LOOPBACK, port)
    await site.start()
    bound = next((a[1] for a in runner.addresses if isinstance(a, tuple)), port)
    return runner, f"http://{LOOPBACK}:{bound}/"
