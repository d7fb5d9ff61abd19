"""Helper savings: compiler and matcher requests made versus naive.

A grid with both gate arms (directive, enforce) and two regimes (the perfect agent without
and with per-turn thinking, the no-think model compiling for both, as in the paper's
Appendix B.3) runs against the scripted endpoint at zero latency. Naive is one matcher call
per gate-arm turn and one compile (graph + revision request) per gate-arm episode; made is
what ``runner.gates.helper_models.Helpers`` sent (compiles cached by compile model and (seed, S, rho),
matcher answers by (model, regime, prompt), both single-flight; filler and revision turns
bypass the matcher by schedule metadata, as in the paper).
"""

from __future__ import annotations

from typing import Any

from bench._common import SERVER_CORE, grid, row, run_loop, scratch
from bench._drive import drive_runner
from bench._endpoint import endpoint_process, server_config
from runner.rundir.logs import read_logs

__all__ = ["run"]

NO_THINK = "scripted/perfect"
THINKING = {
    "name": "scripted/perfect+thinking",
    "served": "scripted/perfect",
    "endpoint": "bench",
    "regime": "thinking",
    "select": "request",
    "compile_model": NO_THINK,
}


def run(quick: bool = False) -> dict[str, Any]:
    try:
        from runner.gates.helper_models import Helpers
    except ImportError:
        return {
            "case": "helpers",
            "rows": [row("helper savings", None, "pending: no runner.gates.helper_models", None)],
        }
    seeds = "100-107" if quick else "100-131"
    with endpoint_process(server_config(), core=SERVER_CORE) as ep, scratch("helpers") as out:
        g = grid(
            ep.url,
            model=NO_THINK,
            arms=("directive", "enforce"),
            seeds=seeds,
            extra_models=(THINKING,),
            concurrency=128,
            max_in_flight=64,
        )
        r = run_loop(lambda: drive_runner(g, out, helpers=Helpers))
        records = list(read_logs(out).values())
    stats = r.helpers.stats.as_dict()
    episodes = len(records)
    turns = sum(len(x.turns) for x in records)
    naive_matcher = turns  # one per arm per turn
    naive_compiles = episodes  # one compile (two requests) per arm per episode
    made_compiles = stats["compile_calls"] / 2
    matcher_ratio = stats["matcher_calls"] / naive_matcher
    compile_ratio = made_compiles / naive_compiles
    return {
        "case": "helpers",
        "setup": f"directive+enforce x no-think+thinking (perfect agent), S=10, seeds {seeds}: "
        f"{episodes} gate episodes, {turns} turns",
        "rows": [
            row(
                f"matcher calls made / naive ({stats['matcher_calls']} / {naive_matcher})",
                round(matcher_ratio, 3),
                "< 1",
                matcher_ratio < 1,
            ),
            row(
                f"  made / turns that consult the matcher ({stats['matcher_requests']})",
                round(stats["matcher_calls"] / max(1, stats["matcher_requests"]), 3),
                "info",
                None,
            ),
            row(
                f"compiles made / naive ({made_compiles:g} / {naive_compiles})",
                round(compile_ratio, 3),
                "< 1",
                compile_ratio < 1,
            ),
        ],
        "helper_stats": stats,
        "episodes": episodes,
        "turns": turns,
        "infrastructure": r.infrastructure,
    }
