"""Fault injection gets past the preflight (issue 28, item 4): the preflight's request draws
no injected fault, the run's requests still do, and the fault seed moves the draws (seed 0:
today's draws)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from runner.execution.connect import open_endpoints, preflight
from runner.rundir.logs import read_logs
from serve.config import FaultConfig, ServerConfig
from serve.faults.rates import draw
from tests.reliability_kit import make_grid, run_inprocess

# The issue's three examples: `ladder run --seeds 100-101 --arms raw --fault ...` (a short
# Retry-After and the test grid's short backoff keep them fast)
EXAMPLES = {
    "503=0.3": FaultConfig(rate_503=0.3),
    "429=0.2 503=0.1": FaultConfig(rate_429=0.2, rate_503=0.1, retry_after_s=0.01),
    "500=0.35": FaultConfig(rate_500=0.35),
}


def test_the_draws_of_fault_seed_0_are_pinned_and_another_seed_moves_them() -> None:
    c = FaultConfig(rate_503=0.3)
    assert [draw(c, 0, n) for n in range(6)] == ["503", "503", "503", None, None, None]
    assert [draw(c, 0, n) for n in range(12)] != [draw(c, 1, n) for n in range(12)]


def test_the_preflight_passes_where_every_other_request_fails() -> None:
    grid = make_grid(seeds="100", arms=("raw",))
    config = ServerConfig(faults=FaultConfig(rate_503=1.0), shutdown_timeout_s=0.1)

    async def go() -> tuple[list[str], str]:
        async with open_endpoints(grid, server_config=config) as endpoints:
            problems = await preflight(grid, endpoints)
            ep = next(iter(endpoints.values()))
            try:
                await ep.chat(grid.models[0].served_name(), [{"role": "user", "content": "x"}],
                              max_tokens=1)  # fmt: skip
            except Exception as e:  # the run's requests are still faulted
                return problems, str(e)
            return problems, ""

    problems, error = asyncio.run(go())
    assert problems == []
    assert "503" in error


@pytest.mark.parametrize("example", list(EXAMPLES))
@pytest.mark.parametrize("seed", [0, 7])
def test_the_issues_fault_examples_complete(example: str, seed: int, tmp_path: Path) -> None:
    grid = make_grid(seeds="100-101", arms=("raw",), attempts=8)
    config = ServerConfig(faults=EXAMPLES[example], seed=seed, shutdown_timeout_s=0.1)
    summary, text = asyncio.run(run_inprocess(grid, tmp_path, config, check=True))
    assert "preflight" in text or "probing endpoints" in text  # the check ran, and passed
    assert summary["episodes_run"] == 2, text
    logged = read_logs(tmp_path)
    retried = sum(c.attempts > 1 for r in logged.values() for t in r.turns for c in t.calls)
    assert retried > 0, "faults were injected into the run and retried"
