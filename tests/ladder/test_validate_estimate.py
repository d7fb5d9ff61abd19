"""``ladder validate --estimate`` / ``--rate`` (#40, items 2 and 6): requests and tokens per
model from one seed per cell on the perfect agent, GPU hours at a rate, and a warning when an
arm's largest prompt outgrows a model's context (the grid's, else the server's model card)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from typer.testing import CliRunner

from ladder.app import app
from ladder.validate import _contexts
from tests.reliability_kit import make_grid

GRID = """
[run]
seeds = "100-131"
steps = [5]
density = [0.3]
arms = ["raw", "checklist"]

[[endpoints]]
name = "e"
base_url = "embedded"

[[models]]
name = "small"
served = "scripted/perfect"
endpoint = "e"
context = 3000
"""


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def test_the_estimate_and_the_context_warning(tmp_path: Path) -> None:
    path = tmp_path / "grid.toml"
    path.write_text(GRID, encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(path), "--offline", "--rate", "1000"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert all(len(x) <= 80 for x in out.splitlines()[1:])  # the first names the file
    flat = " ".join(out.split())
    # 64 episodes of 44 agent turns each (raw and checklist make no helper call)
    assert "small: 64 episodes, 2,816 requests" in flat
    assert "GPU hours" in flat and "largest prompt per arm: raw" in flat
    warnings = [x for x in flat.split("warning: ")[1:]]
    assert len(warnings) == 1 and "arm checklist's largest prompt" in warnings[0]
    assert "context of 3,000" in warnings[0]
    path.write_text(GRID.replace("context = 3000", "context = 100000"), encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(path), "--offline", "--estimate"])
    assert result.exit_code == 0 and "warning" not in result.output


def test_a_bad_rate_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "g.toml"), "--rate", "0"])
    assert result.exit_code == 2 and "--rate must be positive" in result.output


def test_the_context_from_the_servers_model_card() -> None:
    async def go() -> dict[str, int]:
        async def models(_: web.Request) -> web.Response:
            cards = [{"id": "served-m", "max_model_len": 8192}, {"id": "other"}]
            return web.json_response({"object": "list", "data": cards})

        server = web.Application()
        server.router.add_get("/v1/models", models)
        runner = web.AppRunner(server)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        try:
            grid = make_grid(
                models=[
                    {"name": "m", "served": "served-m", "endpoint": "embedded"},
                    {"name": "n", "served": "other", "endpoint": "embedded"},
                ]
            )
            for e in grid.endpoints:
                e.base_url = f"http://127.0.0.1:{port}/v1"
            return await _contexts(grid)
        finally:
            await runner.cleanup()

    assert asyncio.run(go()) == {"m": 8192}
