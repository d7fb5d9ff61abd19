"""The preflight asks llama.cpp's ``/slots`` where a model sets ``agent_slot`` /
``helper_slot`` (#49, item 8): a slot id the server does not list is warned about; a server
with no ``/slots`` (404, llama-cpp-python's), a disabled one (llama.cpp's 501) or one that
does not answer is said once per endpoint to leave the options unchecked. Real loopback
aiohttp servers; ``ladder validate`` and ``ladder run`` print the warnings."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from typer.testing import CliRunner

from ladder.app import app

KEY = "sk-slots-test-0123456789"
REPLY = {
    "id": "x",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
    # a brief-sized prompt: the run's brief check passes
    "usage": {"prompt_tokens": 100_000, "completion_tokens": 1},
}


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def _server(slots: int | None, status: int = 200) -> Iterator[str]:
    """A server listing model ``m`` at /v1/models and ``slots`` slots at /slots (None: no
    such route, 404), or answering /slots with ``status``; /slots asks for the key."""
    loop = asyncio.new_event_loop()
    app_ = web.Application()

    async def chat(_: web.Request) -> web.Response:
        return web.json_response(REPLY)

    async def models(_: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "m"}]})

    async def slot_list(request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return web.json_response({"error": "Invalid API Key"}, status=401)
        if status != 200:
            return web.json_response({"error": {"message": "not supported"}}, status=status)
        return web.json_response([{"id": i, "is_processing": False} for i in range(slots or 0)])

    app_.router.add_post("/v1/chat/completions", chat)
    app_.router.add_get("/v1/models", models)
    if slots is not None or status != 200:
        app_.router.add_get("/slots", slot_list)
    runner = web.AppRunner(app_)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = runner.addresses[0][1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)


@pytest.fixture
def two_slots() -> Iterator[str]:
    yield from _server(2)


@pytest.fixture
def no_slots() -> Iterator[str]:
    yield from _server(None)


@pytest.fixture
def disabled() -> Iterator[str]:
    yield from _server(None, 501)


def _grid(tmp_path: Path, url: str, **slots: int) -> Path:
    text = '[run]\nseeds = "100"\nsteps = [5]\ndensity = [0.3]\narms = ["raw"]\n\n'
    text += f'[[endpoints]]\nname = "gpu"\nbase_url = "{url}"\napi_key_env = "SLOTS_KEY"\n'
    text += '\n[[models]]\nname = "m"\nendpoint = "gpu"\n'
    text += "".join(f"{k} = {v}\n" for k, v in slots.items())
    path = tmp_path / "grid.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _warnings(output: str) -> list[str]:
    """The warning lines, each joined with its wrapped continuation lines."""
    out: list[str] = []
    for line in output.splitlines():
        if line.startswith("warning:"):
            out.append(line)
        elif out and line.startswith("  "):
            out[-1] += " " + line.strip()
    return out


def _validate(grid: Path) -> tuple[list[str], str]:
    result = CliRunner(env={"SLOTS_KEY": KEY}).invoke(app, ["validate", str(grid)])
    assert result.exit_code == 0, result.output
    assert KEY not in result.output
    return _warnings(result.stderr), result.output


def test_listed_slots_pass_and_a_missing_id_is_warned_about(two_slots: str, tmp_path: Path) -> None:
    warned, _ = _validate(_grid(tmp_path, two_slots, agent_slot=0, helper_slot=1))
    assert warned == []
    warned, _ = _validate(_grid(tmp_path, two_slots, agent_slot=0, helper_slot=2))
    (line,) = warned
    assert line.startswith("warning: model 'm': helper_slot = 2, but endpoint gpu (")
    assert "lists 2 slots (ids 0-1) at /slots" in line
    # no slot option: /slots is not asked, nothing said
    assert _validate(_grid(tmp_path, two_slots))[0] == []


def test_a_server_without_slots_is_said_once(no_slots: str, tmp_path: Path) -> None:
    warned, output = _validate(_grid(tmp_path, no_slots, agent_slot=0, helper_slot=1))
    (line,) = warned
    assert line.startswith("warning: endpoint gpu (")
    assert "agent_slot, helper_slot cannot be checked: it has no /slots (HTTP 404" in line
    assert "a server without llama.cpp's slots ignores them (docs/cli.md)" in line
    assert all(len(x) <= 80 for x in output.splitlines() if "/grid.toml" not in x)


def test_a_disabled_slots_endpoint_names_the_flag(disabled: str, tmp_path: Path) -> None:
    (line,) = _validate(_grid(tmp_path, disabled, helper_slot=1))[0]
    assert "helper_slot cannot be checked: its /slots is disabled" in line
    assert "start it with --slots" in line


def test_the_run_says_so_once(no_slots: str, tmp_path: Path) -> None:
    grid = _grid(tmp_path, no_slots, agent_slot=0, helper_slot=1)
    args = ["run", str(grid), "--out", str(tmp_path / "run"), "--no-live"]
    result = CliRunner(env={"SLOTS_KEY": KEY}).invoke(app, args)
    said = [x for x in _warnings(result.output) if "cannot be checked" in x]
    assert len(said) == 1 and "it has no /slots" in said[0], result.output
    assert "Traceback" not in result.output and KEY not in result.output
