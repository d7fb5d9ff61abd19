"""The viewer on a large run: index build, cached reopen, one episode opened on demand.

Reads the rescoring case's synthetic log (:func:`bench.bench_rescore.shared_log`, built once
per bench process: 2 models x 5 graphs x 6 arms; 234 seeds = 14,040 episodes, the paper
grid's size; ``quick``: 8 seeds) and times, through :class:`runner.viewer.data.RunView` as
``ladder view`` serves it:

* the first overview (every line scanned and scored once, the index written to the run
  directory);
* the overview again in a fresh process state (a new ``RunView`` reading the cached index,
  no log line read);
* one episode opened turn by turn (the median over 20 episodes spread over the cells: one
  seek and one line read, one detailed score);
* one cell's episode list; and the index file's size;
* the first overview again as ``ladder view``'s page gets it (#50: the index built in the
  background, the page asking each second): the time until a page shows the first indexed
  episodes (with its "indexing N of M files" line) and until the complete overview, which
  must equal the one built in one go.

Targets: a cached reopen under 2 s and an episode under 0.2 s (a page that stays fast);
the first overview of 14,040 episodes within 5 s (#50; an absolute figure, the issue's, read
with the calibration line), built in one go or in the background; in the background, a page
with the first episodes within 1 s. The issue's deliverable is met by either (its words: "<= 5 s
on this machine (or incremental: a page in 1 s while the index fills)"): a row reads that
criterion, beside the rows for each figure, which keep their own targets.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

from bench.bench_rescore import shared_log
from runner.rundir.logs import log_files
from runner.viewer.data import RunView
from runner.viewer.index import INDEX_FILE
from scoring.display.models import CellsView

__all__ = ["run"]

SEEDS = 234  # 2 x 5 x 6 x 234 = 14,040 episodes
QUICK_SEEDS = 8
REOPEN_TARGET_S = 2.0
EPISODE_TARGET_S = 0.2
FIRST_TARGET_S = 5.0  # the first overview of 14,040 episodes (#50)
PARTIAL_TARGET_S = 1.0  # a page with the first indexed episodes, the rest in the background
POLL_S = 1.0  # the page asks again each second while the index fills (runner/viewer/static)
_ROOT = Path(__file__).resolve().parent.parent


def _incremental(run_dir: Path) -> dict[str, Any]:
    """(s until a page shows indexed episodes, s until the complete overview, pages asked,
    the overview's digest) with the index built in the background from nothing, as ``ladder
    view`` serves it; run in a fresh process (:func:`_fresh`: scipy not yet imported)."""
    (run_dir / INDEX_FILE).unlink(missing_ok=True)
    t = time.perf_counter()
    view = RunView(run_dir, background=True)
    first: float | None = None
    pages = 0
    while True:
        page = view.cells()
        pages += 1
        if page.indexing is None:
            break
        if first is None and page.indexing.episodes:
            first = time.perf_counter() - t
        # the page's next ask: a second later (sooner while no episode is in, to time it)
        view.index.built(POLL_S if first is not None else 0.05)
    done = time.perf_counter() - t
    return {
        "partial_s": first if first is not None else done,
        "complete_s": done,
        "pages": pages,
        "digest": _digest(page),
    }


def _digest(view: CellsView) -> str:
    return hashlib.sha256(msgspec.json.encode(msgspec.structs.replace(view, run=""))).hexdigest()


def _fresh(run_dir: Path) -> dict[str, Any]:
    """:func:`_incremental` in a fresh process (its last stdout line, JSON)."""
    code = f"import json, sys; from bench.bench_view import _incremental as f; print(json.dumps(f(__import__('pathlib').Path({str(run_dir)!r}))))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=_ROOT
    )
    got: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return got


def _timed(fn: Any, *args: Any) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


def run(quick: bool = False, seeds: int | None = None) -> dict[str, Any]:
    seeds = seeds if seeds is not None else QUICK_SEEDS if quick else SEEDS
    run_dir = shared_log(seeds)  # the rescoring case's log when it ran first
    (run_dir / INDEX_FILE).unlink(missing_ok=True)  # a first overview: no index yet
    written = sum(1 for p in log_files(run_dir) for _ in p.open("rb"))
    log_mb = sum(p.stat().st_size for p in run_dir.rglob("*.jsonl")) / 1e6
    first = RunView(run_dir)
    overview, build_s = _timed(first.cells)
    index_mb = (run_dir / INDEX_FILE).stat().st_size / 1e6
    again = RunView(run_dir)
    _, reopen_s = _timed(again.cells)
    assert again.index.scanned == 0, "the cached index was not used"
    slugs = again.index.slugs()
    picks = [(slugs[i % len(slugs)], (i * 7) % seeds) for i in range(20)]
    times = []
    for slug, seed in picks:
        view, dt = _timed(again.episode, slug, seed)
        assert view is not None and view.turns
        times.append(dt)
    episode_s = statistics.median(times)
    _, list_s = _timed(again.episodes, slugs[0])
    episodes = sum(c.line.n for c in overview.cells)
    bg = _fresh(run_dir)
    assert bg["digest"] == _digest(overview), "the overview built in the background differs"
    partial_s, complete_s, pages = bg["partial_s"], bg["complete_s"], bg["pages"]
    full = seeds >= SEEDS
    rows = [
        {
            "figure": f"first overview: index {episodes} episodes ({log_mb:.0f} MB of logs)",
            "value": round(build_s, 2),
            "target": f"<= {FIRST_TARGET_S:g}" if seeds >= SEEDS else "info",
            "holds": build_s <= FIRST_TARGET_S if seeds >= SEEDS else None,
        },
        {
            "figure": "in the background: a page with the first indexed episodes (s)",
            "value": round(partial_s, 2),
            "target": f"<= {PARTIAL_TARGET_S:g}" if full else "info",
            "holds": partial_s <= PARTIAL_TARGET_S if full else None,
        },
        {
            "figure": f"in the background: the complete overview (s; {pages} pages asked)",
            "value": round(complete_s, 2),
            "target": f"<= {FIRST_TARGET_S:g}" if full else "info",
            "holds": complete_s <= FIRST_TARGET_S if full else None,
        },
        {
            # the issue's own criterion (#50): "the viewer's first overview of 14,040 episodes
            # <= 5 s on this machine (or incremental: a page in 1 s while the index fills)"
            "figure": "the issue's viewer target: overview <= 5 s, or a page <= 1 s while it fills",
            "value": f"{min(build_s, complete_s):.2f} / {partial_s:.2f}",
            "target": "either" if full else "info",
            "holds": (min(build_s, complete_s) <= FIRST_TARGET_S or partial_s <= PARTIAL_TARGET_S)
            if full
            else None,
        },
        {
            "figure": "overview from the cached index (s)",
            "value": round(reopen_s, 3),
            "target": f"< {REOPEN_TARGET_S:g}",
            "holds": reopen_s < REOPEN_TARGET_S,
        },
        {
            "figure": "one episode opened turn by turn (s, median of 20)",
            "value": round(episode_s, 4),
            "target": f"< {EPISODE_TARGET_S:g}",
            "holds": episode_s < EPISODE_TARGET_S,
        },
    ]
    result = {
        "case": "view",
        "episodes": episodes,
        "written": written,
        "log_mb": round(log_mb, 1),
        "index_mb": round(index_mb, 1),
        "build_s": round(build_s, 2),
        "reopen_s": round(reopen_s, 3),
        "episode_s": round(episode_s, 4),
        "episode_list_s": round(list_s, 4),
        "partial_s": round(partial_s, 2),
        "complete_s": round(complete_s, 2),
        "rows": rows,
    }
    for r in rows:
        print(f"{r['figure']:<70} {r['value']:>9}  {r['target']}", flush=True)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    run()
