"""Per-arm cost: the ``ladder cost`` table (``scoring.analyses.cost.cost_rows``) for a synthetic-agent
grid of every arm that exists.

The scripted endpoint (its own process) serves the synthetic agent
(``scripted/synthetic?obey=0.9&fresh=0.35&seed=7``, the demo's); the runner runs every
registered arm on S = 10, rho = 0.15, with the gate arms' helpers when they exist. Figures:
agent tokens per episode as a multiple of the raw transcript, agent and helper calls per
episode. Token counts are the endpoint's (tiktoken cl100k). Twice: at zero latency (tokens
and calls; latency columns are not meaningful there and stay in the JSON), then on fewer seeds
against the endpoint's latency model (:data:`LATENCY`): episode wall time per arm, and the
whole ``ladder cost`` table of that run under ``text``.
"""

from __future__ import annotations

from typing import Any

from bench._common import SERVER_CORE, grid, row, run_loop, scratch
from bench._drive import drive_runner
from bench._endpoint import endpoint_process, server_config
from runner.rundir.logs import read_logs
from scoring.analyses.cost import CostRow, cost_rows
from scoring.report.cost_table import cost_table
from scoring.results.flat import flat_row

__all__ = ["run"]

MODEL = "scripted/synthetic?obey=0.9&fresh=0.35&seed=7"


def _arms() -> tuple[list[str], Any]:
    """Arms that run here: the text arms always, the gate arms once their helpers exist."""
    from protocol.arms.table import arm_names, memory_arms

    arms = [a for a in arm_names() if a not in memory_arms()]
    try:
        from runner.gates.helper_models import Helpers
    except ImportError:
        return [a for a in arms if a in ("raw", "checklist")], None
    return arms, Helpers


# The latency-emulating run: 16 sequences "computing" at once, each request 20 ms plus 1 us
# per prompt token and 2 ms per completion token (serve/faults/latency.py's "tokens" model).
LATENCY = {
    "concurrency": 16,
    "mode": "tokens",
    "seconds": 0.02,
    "prefill_s_per_token": 1e-6,
    "decode_s_per_token": 2e-3,
}


def _cost(
    config: dict[str, Any], arms: list[str], helpers: Any, seeds: str, cap: int
) -> tuple[list[CostRow], int]:
    with endpoint_process(server_config(**config), core=SERVER_CORE) as ep, scratch("cost") as out:
        g = grid(ep.url, model=MODEL, arms=tuple(arms), seeds=seeds, concurrency=2 * cap,
                 max_in_flight=cap)  # fmt: skip
        r = run_loop(lambda: drive_runner(g, out, helpers=helpers))
        records = read_logs(out)
    return cost_rows(records.values()), r.infrastructure


def _latency_rows(table: list[CostRow]) -> list[dict[str, Any]]:
    return [
        row(
            f"{c.cell.arm} (latency model): episode wall s p50 (mean {c.wall_s.mean:.2f}, p95 "
            f"{c.wall_s.p95:.2f}; agent server s p95 {c.server_s.p95:.3f}, slot wait p95 "
            f"{c.wait_s.p95:.3f})",
            round(c.wall_s.p50, 3),
            "info",
            None,
        )
        for c in table
    ]


def run(quick: bool = False) -> dict[str, Any]:
    seeds = "100-107" if quick else "100-131"
    arms, helpers = _arms()
    table, infrastructure = _cost({}, arms, helpers, seeds, 64)
    timed, timed_infrastructure = _cost(
        LATENCY, arms, helpers, "100-103" if quick else "100-107", 24
    )
    rows = [
        row(
            f"{c.cell.arm}: agent tokens x raw (per episode {c.total_tokens / 1000:.1f}k; "
            f"calls agent {c.agent_calls:.1f} matcher required {c.matcher_required:.1f}"
            f" made {c.matcher_made:.1f} cached {c.matcher_cached:.1f})",
            round(c.x_raw, 3) if c.x_raw is not None else None,
            "info",
            None,
        )
        for c in table
    ]
    return {
        "case": "cost",
        "setup": f"{MODEL}, S=10 rho=0.15, seeds {seeds}, arms {', '.join(arms)}; latency "
        f"model {LATENCY}",
        "rows": rows + _latency_rows(timed),
        "table": [flat_row("cost", c.cell, c) for c in table],
        "latency_table": [flat_row("cost", c.cell, c) for c in timed],
        "text": cost_table(timed),
        "infrastructure": infrastructure + timed_infrastructure,
        "arms_missing": [a for a in ("directive", "enforce", "ledger", "hybrid") if a not in arms],
    }
