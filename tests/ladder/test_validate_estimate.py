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
    (tmp_path / "g.toml").write_text("")  # exists: ladder.early refuses a missing grid first
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


DOWN = """
[run]
seeds = "100-101"
steps = [5]
density = [0.3]
arms = ["raw"]

[[endpoints]]
name = "gpu"
base_url = "http://127.0.0.1:9/v1"

[[models]]
name = "thinker"
endpoint = "gpu"
regime = "thinking"
"""


def test_the_estimate_needs_no_server_and_bounds_thinking_replies(tmp_path: Path) -> None:
    # Issue #49: the estimate exited 2 at the server check, gave a thinking model the
    # perfect agent's 16 tokens a reply and applied one rate to prompt and completion.
    path = tmp_path / "grid.toml"
    path.write_text(DOWN, encoding="utf-8")
    args = ["validate", str(path), "--estimate", "--prefill-rate", "1000", "--decode-rate", "10"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "warning: thinker at http://127.0.0.1:9/v1: connection error" in result.stderr
    assert all(len(x) <= 80 for x in result.output.splitlines()[1:])
    flat = " ".join(result.stdout.split())
    requests = int(flat.split("thinker: 2 episodes, ")[1].split(" requests")[0])
    bound = requests * 2500  # raw makes agent requests only, each at most 2,500 tokens
    assert f"thinking: completion at most {bound:,} tokens (an upper bound" in flat
    assert "agent 2,500, matcher 2,500, compiler 6,000" in flat
    prompt = int(flat.split(" requests, ")[1].split(" prompt")[0].replace(",", ""))
    completion = int(flat.split(" prompt and ")[1].split(" completion")[0].replace(",", ""))
    hours = (prompt / 1000 + completion / 10) / 3600
    assert f"at prefill 1000 and decode 10 tokens/s: {hours:.2f} GPU hours" in flat
    thinking = (prompt / 1000 + bound / 10) / 3600
    assert f"tokens/s: {thinking:.2f} GPU hours" in flat.split("thinking:")[1]
    # without --estimate the same dead server is still an error
    plain = CliRunner().invoke(app, ["validate", str(path)])
    assert plain.exit_code == 2 and "error: thinker at" in plain.stderr


def test_one_rate_alone_is_refused(tmp_path: Path) -> None:
    (tmp_path / "g").write_text("")  # exists: ladder.early refuses a missing grid first
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "g"), "--decode-rate", "5"])
    assert result.exit_code == 2
    assert "--prefill-rate (or --rate) is needed with the other rate" in result.stderr
