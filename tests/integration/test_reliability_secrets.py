"""Secrets: the API key is read from the environment variable the grid names, sent as a
bearer token, and appears in no output file (manifest, logs, results, caches, report) and in
no output of the command, on success or on an error path (an unreachable endpoint, a server
that echoes the key back in its error message).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from typer.testing import CliRunner

from ladder.app import app
from runner.grid.expand import GridError, parse_grid
from tests.reliability_kit import grid_data, grid_toml, ladder, records, run_inprocess

ENV = "LADDER_TEST_API_KEY"
SENTINEL = "sk-sentinel-7f3a9c0e1d2b4a68"


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)  # `ladder` commands install uvloop's


def _leaks(root: Path, *texts: str) -> list[str]:
    """Every file under ``root`` and every text that holds the sentinel (or its tail)."""
    needles = (SENTINEL.encode(), SENTINEL[-12:].encode())
    hits = [
        str(p) for p in root.rglob("*") if p.is_file() and any(n in p.read_bytes() for n in needles)
    ]
    hits += [f"output #{i}" for i, t in enumerate(texts) if any(n.decode() in t for n in needles)]
    return hits


def test_a_run_and_its_reports_never_hold_the_key(tmp_path: Path, monkeypatch: Any) -> None:
    data = grid_data(seeds="100-101", steps=5, arms=("raw", "directive"), api_key_env=ENV)
    grid_file = tmp_path / "grid.toml"
    grid_file.write_text(grid_toml(data))
    out = tmp_path / "run"
    done = ladder("run", str(grid_file), "--out", str(out), "--no-live", env={ENV: SENTINEL})
    assert done.returncode == 0, done.stderr
    outputs = [done.stdout, done.stderr]
    monkeypatch.setenv(ENV, SENTINEL)
    for args in (("validate", str(grid_file)), ("score", str(out)), ("report", str(out))):
        result = CliRunner().invoke(app, list(args))
        assert result.exit_code == 0, (args, result.stdout, result.stderr)
        outputs += [result.stdout, result.stderr]
    files = {p.relative_to(out).parts[0] for p in out.rglob("*") if p.is_file()}
    assert {"manifest.json", "logs", "results.jsonl", "cache", "report.md"} <= files
    assert ENV in (out / "manifest.json").read_text(), "the manifest names the variable"
    assert not _leaks(tmp_path, *outputs)


def test_an_unreachable_endpoint_does_not_print_the_key(tmp_path: Path, monkeypatch: Any) -> None:
    data = grid_data(seeds="100", steps=5, arms=("raw",), api_key_env=ENV)
    data["endpoints"][0]["base_url"] = "http://127.0.0.1:9/v1"  # nothing listens there
    grid_file = tmp_path / "grid.toml"
    grid_file.write_text(grid_toml(data))
    done = ladder(
        "run", str(grid_file), "--out", str(tmp_path / "run"), "--no-live", env={ENV: SENTINEL}
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "127.0.0.1:9" in done.stderr and "Traceback" not in done.stderr
    monkeypatch.setenv(ENV, SENTINEL)
    result = CliRunner().invoke(app, ["validate", str(grid_file)])
    assert result.exit_code == 2 and "127.0.0.1:9" in result.stderr
    outputs = [done.stdout, done.stderr, result.stdout, result.stderr]
    assert not _leaks(tmp_path, *outputs)
    assert not (tmp_path / "run").exists(), "a run that never started leaves nothing"


@asynccontextmanager
async def _echoing_server() -> AsyncIterator[tuple[str, list[str]]]:
    """A server that rejects every request with a 401 quoting the bearer token, as some
    vendors do ("Incorrect API key provided: ..."); yields (base URL, tokens seen)."""
    seen: list[str] = []

    async def reject(request: web.Request) -> web.Response:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        seen.append(token)
        return web.json_response(
            {"error": {"message": f"Incorrect API key provided: {token}.", "code": 401}},
            status=401,
        )

    app = web.Application()
    app.router.add_post("/v1/chat/completions", reject)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/v1", seen
    finally:
        await runner.cleanup()


async def test_a_server_echoing_the_key_is_redacted(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv(ENV, SENTINEL)
    async with _echoing_server() as (url, seen):
        data = grid_data(seeds="100", steps=5, arms=("raw", "directive"), api_key_env=ENV)
        data["endpoints"][0]["base_url"] = url
        grid = parse_grid(data)
        with pytest.raises(GridError) as refused:  # the preflight
            await run_inprocess(grid, tmp_path / "refused")
        summary, console = await run_inprocess(grid, tmp_path / "run", check=False)
    assert seen and set(seen) == {SENTINEL}, "the key from the environment was sent"
    # the refusal is wrapped at 80 columns (#49): read it as one line
    assert "Incorrect API key provided: [redacted]" in " ".join(str(refused.value).split())
    assert SENTINEL not in str(refused.value)
    recs = records(tmp_path / "run")
    assert summary["infrastructure"] == len(recs) == 2
    assert {r.termination for r in recs.values()} == {"client_error"}
    assert all("[redacted]" in (r.error or "") for r in recs.values())
    assert not _leaks(tmp_path, str(refused.value), console)


def test_the_manifest_names_the_variable_not_the_key(tmp_path: Path) -> None:
    """The grid digest and manifest keep the variable's name; the key is read at run time."""
    from runner.rundir.manifest import write_or_check_manifest

    data = grid_data(seeds="100", api_key_env=ENV)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ENV, SENTINEL)
        grid = parse_grid(data)
        write_or_check_manifest(tmp_path, grid)
    assert not _leaks(tmp_path)
    assert ENV in (tmp_path / "manifest.json").read_text()
