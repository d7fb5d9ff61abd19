"""Per-arm cost: the ``ladder cost`` table (``scoring.cost.cost_rows``) for a synthetic-agent
grid of every arm that exists.

The scripted endpoint (zero latency, its own process) serves the synthetic agent
(``scripted/synthetic?obey=0.9&fresh=0.35&seed=7``, the demo's); the runner runs every
registered arm on S = 10, rho = 0.15, with the gate arms' helpers when they exist. Figures:
agent tokens per episode as a multiple of the raw transcript, agent and helper calls per
episode. Token counts are the endpoint's (tiktoken cl100k); latency columns are not
meaningful at zero latency and are left out of the table (they are in the JSON).
"""

from __future__ import annotations

from typing import Any

from bench._common import SERVER_CORE, grid, row, run_loop, scratch
from bench._drive import drive_runner
from bench._endpoint import endpoint_process, server_config
from runner.logs import read_logs
from scoring.cost import cost_rows
from scoring.flat import flat_row

__all__ = ["run"]

MODEL = "scripted/synthetic?obey=0.9&fresh=0.35&seed=7"


def _arms() -> tuple[list[str], Any]:
    """Arms that run here: the text arms always, the gate arms once their helpers exist."""
    import runner.arms as arms_pkg

    try:
        from runner.helpers import Helpers
    except ImportError:
        return [a for a in arms_pkg.ARMS if a in ("raw", "checklist")], None
    return list(arms_pkg.ARMS), Helpers


def run(quick: bool = False) -> dict[str, Any]:
    seeds = "100-107" if quick else "100-131"
    arms, helpers = _arms()
    with endpoint_process(server_config(), core=SERVER_CORE) as ep, scratch("cost") as out:
        g = grid(
            ep.url, model=MODEL, arms=tuple(arms), seeds=seeds, concurrency=128, max_in_flight=64
        )
        r = run_loop(lambda: drive_runner(g, out, helpers=helpers))
        records = read_logs(out)
    table = cost_rows(records.values())
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
        "setup": f"{MODEL}, S=10 rho=0.15, seeds {seeds}, arms {', '.join(arms)}",
        "rows": rows,
        "table": [flat_row("cost", c.cell, c) for c in table],
        "infrastructure": r.infrastructure,
        "arms_missing": [a for a in ("directive", "enforce", "ledger", "hybrid") if a not in arms],
    }
