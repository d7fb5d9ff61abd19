"""Secrets go only where the user said (#36): a run's manifest names endpoints and key
variables, but the probe never uses a manifest's key variable; a URL's credentials are
refused at validation and redacted wherever a URL is shown; a key with control characters is
one line."""

from __future__ import annotations

from typing import Any

import pytest

from runner.grid.expand import GridError, parse_grid
from runner.grid.schema import redact_url, url_problem
from runner.probe.options import ProbeError
from runner.probe.traps import endpoint_lines, trusted_endpoints
from tests.reliability_kit import grid_data, grid_toml, ladder


def _grid(url: str = "http://127.0.0.1:9/v1", env: str | None = "AWS_SECRET_ACCESS_KEY") -> Any:
    data = grid_data(seeds="100", arms=("raw",), api_key_env=env)
    data["endpoints"][0]["base_url"] = url
    return parse_grid(data, need_keys=False)


def test_a_manifests_key_variable_is_never_used() -> None:
    shared = _grid()
    (ep,) = trusted_endpoints(shared, None, None).endpoints
    assert ep.api_key_env is None
    (ep,) = trusted_endpoints(shared, None, "MY_KEY").endpoints
    assert ep.api_key_env == "MY_KEY"
    mine = _grid("http://10.0.0.5:8000/v1", env="MINE")
    (ep,) = trusted_endpoints(shared, mine, None).endpoints
    assert (ep.base_url, ep.api_key_env) == ("http://10.0.0.5:8000/v1", "MINE")
    with pytest.raises(ProbeError, match="names no endpoint"):
        trusted_endpoints(shared, parse_grid(_no_endpoints(), need_keys=False), None)


def _no_endpoints() -> dict[str, Any]:
    data = grid_data(seeds="100", arms=("raw",))
    data["endpoints"][0]["name"] = "elsewhere"
    data["models"][0]["endpoint"] = "elsewhere"
    return data


def test_each_endpoint_is_printed_with_its_key_variable() -> None:
    lines = endpoint_lines(trusted_endpoints(_grid(), None, None))
    assert lines == ["endpoint embedded: http://127.0.0.1:9/v1 (no key)"]


def test_url_credentials_are_refused_and_redacted() -> None:
    url = "http://user:hunter2@example.com:8000/v1"
    assert redact_url(url) == "http://***@example.com:8000/v1"
    why = url_problem(url)
    assert why is not None and "credentials" in why and "hunter2" not in why
    with pytest.raises(GridError) as refused:
        _grid(url)
    assert "hunter2" not in str(refused.value) and len(str(refused.value).splitlines()) == 1
    assert redact_url("http://h/\x1b[2J") == "http://h/\\x1b[2J"


@pytest.mark.parametrize("key", ["sk-abc\r\nX-Evil: 1", "sk-\x00abc"])
def test_a_key_with_control_characters_is_one_line_exit_2(key: str, tmp_path: Any) -> None:
    data = grid_data(seeds="100", arms=("raw",), api_key_env="LADDER_TEST_KEY")
    grid_file = tmp_path / "grid.toml"
    grid_file.write_text(grid_toml(data))
    for args in (
        ("validate", str(grid_file)),
        ("run", str(grid_file), "--out", str(tmp_path / "r")),
    ):
        done = ladder(*args, env={"LADDER_TEST_KEY": key.replace("\x00", "\x01")})
        assert done.returncode == 2, done.stdout + done.stderr
        assert "control characters" in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "abc" not in done.stderr


def test_ladder_probe_prints_the_endpoint_and_sends_no_key_a_manifest_names(
    tmp_path: Any,
) -> None:
    """A shared run directory's manifest rewritten to name a server of its choosing and
    AWS_SECRET_ACCESS_KEY: the probe prints that endpoint first and sends it no key."""
    import asyncio
    import os
    import subprocess

    import orjson
    from aiohttp import web

    from tests.fakes import ok
    from tests.reliability_kit import REPO, ladder_argv, run_inprocess

    data = grid_data(seeds="100-101", steps=10, arms=("raw",))
    data["models"] = [{"name": "scripted/perfect", "endpoint": "embedded"}]
    run = tmp_path / "run"
    asyncio.run(run_inprocess(parse_grid(data), run))
    seen: list[str] = []  # every Authorization header the server received

    async def answer(request: web.Request) -> web.StreamResponse:
        seen.append(request.headers.get("Authorization", ""))
        return ok("I will look into it.")(await request.json())

    async def probe() -> subprocess.CompletedProcess[str]:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", answer)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
        try:
            manifest = orjson.loads((run / "manifest.json").read_bytes())
            manifest["grid"]["endpoints"][0]["base_url"] = url
            manifest["grid"]["endpoints"][0]["api_key_env"] = "AWS_SECRET_ACCESS_KEY"
            (run / "manifest.json").write_bytes(orjson.dumps(manifest))
            argv = ladder_argv(
                "probe", str(run), "--out", str(tmp_path / "p"), "--samples", "0", "--limit", "1"
            )
            env = {"PYTHONPATH": str(REPO), "AWS_SECRET_ACCESS_KEY": "sk-sentinel-0123456789"}
            proc = await asyncio.create_subprocess_exec(
                *argv, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            out, err = await proc.communicate()
        finally:
            await runner.cleanup()
        return subprocess.CompletedProcess(argv, proc.returncode or 0, out.decode(), err.decode())

    done = asyncio.run(probe())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "endpoint embedded: http://127.0.0.1:" in done.stderr and "(no key)" in done.stderr
    assert seen and set(seen) == {""}, "re-asked on the manifest's endpoint, with no key"
    assert "sk-sentinel" not in done.stdout + done.stderr
