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
* one cell's episode list; and the index file's size.

Targets: a cached reopen under 2 s and an episode under 0.2 s (a page that stays fast);
the first overview of 14,040 episodes within 5 s (#50; an absolute figure, the issue's, read
with the calibration line).
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

from bench.bench_rescore import shared_log
from runner.rundir.logs import log_files
from runner.viewer.data import RunView
from runner.viewer.index import INDEX_FILE

__all__ = ["run"]

SEEDS = 234  # 2 x 5 x 6 x 234 = 14,040 episodes
QUICK_SEEDS = 8
REOPEN_TARGET_S = 2.0
EPISODE_TARGET_S = 0.2
FIRST_TARGET_S = 5.0  # the first overview of 14,040 episodes (#50)


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
    rows = [
        {
            "figure": f"first overview: index {episodes} episodes ({log_mb:.0f} MB of logs)",
            "value": round(build_s, 2),
            "target": f"<= {FIRST_TARGET_S:g}" if seeds >= SEEDS else "info",
            "holds": build_s <= FIRST_TARGET_S if seeds >= SEEDS else None,
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
        "rows": rows,
    }
    for r in rows:
        print(f"{r['figure']:<70} {r['value']:>9}  {r['target']}", flush=True)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    run()
