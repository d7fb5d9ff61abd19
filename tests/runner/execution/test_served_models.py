"""The preflight compares each model with its server's ``/models`` (#49, item 8): a model
the server does not list is refused; a server that lists none is a warning, once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from typer.testing import CliRunner

from ladder.app import app

REPLY = {
    "id": "x",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1},
}


def _server(listed: list[str] | None) -> Iterator[str]:
    """A server that answers any model name (as llama-cpp-python does), listing ``listed``
    at /v1/models (None: no such route)."""
    import asyncio

    loop = asyncio.new_event_loop()
    app_ = web.Application()

    async def chat(_: web.Request) -> web.Response:
        return web.json_response(REPLY)

    async def models(_: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": x} for x in listed or []]})

    app_.router.add_post("/v1/chat/completions", chat)
    if listed is not None:
        app_.router.add_get("/v1/models", models)
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
def smollm() -> Iterator[str]:
    yield from _server(["smollm2-135m"])


@pytest.fixture
def unlisted() -> Iterator[str]:
    yield from _server(None)


def _grid(tmp_path: Path, url: str, *models: str) -> Path:
    text = '[run]\nseeds = "100"\nsteps = [5]\ndensity = [0.3]\narms = ["raw"]\n\n'
    text += f'[[endpoints]]\nname = "gpu"\nbase_url = "{url}"\n'
    for m in models:
        text += f'\n[[models]]\nname = "{m}"\nendpoint = "gpu"\n'
    path = tmp_path / "grid.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_model_the_server_does_not_list_is_refused(smollm: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["validate", str(_grid(tmp_path, smollm, "gemma3-270m"))])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()  # wrapped under its prefix at 80 columns
    assert all(x.startswith("error: ") and len(x) <= 80 for x in lines), lines
    text = " ".join(x.removeprefix("error: ").strip() for x in lines)
    assert f"'gemma3-270m' is not served at {smollm}: it serves 'smollm2-135m'" in text
    ok = CliRunner().invoke(app, ["validate", str(_grid(tmp_path, smollm, "smollm2-135m"))])
    assert ok.exit_code == 0, ok.output
    assert "every endpoint and model answered" in ok.stdout and "warning" not in ok.output


def test_a_server_that_lists_none_is_warned_about_once(unlisted: str, tmp_path: Path) -> None:
    grid = _grid(tmp_path, unlisted, "a", "b")
    result = CliRunner().invoke(app, ["validate", str(grid)])
    assert result.exit_code == 0, result.output
    warnings = [x for x in result.stderr.splitlines() if x.startswith("warning:")]
    assert len(warnings) == 1 and "lists no model at /models" in " ".join(result.stderr.split())
