"""Keys redacted wherever text is stored or printed (#47): a reply quoting the key (as
given, lowercased, after ``Bearer``), and an error body echoing it lowercased, reach no log,
no record's ``error``, no output of `ladder run` or `ladder validate`."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from aiohttp import web

from runner.redact import REDACTED, add_secret, clear_secrets, redact, redact_bytes
from tests.reliability_kit import grid_data, grid_toml, ladder

ENV = "LADDER_TEST_API_KEY"
KEY = "sk-Sentinel-7F3a9C0e1D2b4A68"
FORMS = (KEY, KEY.lower(), KEY.upper())


@pytest.fixture(autouse=True)
def _fresh_secrets() -> Iterator[None]:
    clear_secrets()
    yield
    clear_secrets()


def test_redact_replaces_the_key_its_cases_and_any_bearer_token() -> None:
    add_secret(KEY)
    text = f"a {KEY} b {KEY.lower()} c {KEY.upper()} Authorization: Bearer abc123-Other-Token"
    shown = redact(text)
    assert not any(f in shown for f in FORMS) and "abc123-Other-Token" not in shown
    assert shown.count(REDACTED) == 4
    assert redact("the bearer of bad news, bearer responsibilities") == (
        "the bearer of bad news, bearer responsibilities"
    )
    line = msgspec.json.encode({"content": f'quote "{KEY.lower()}" and bearer {KEY}'}) + b"\n"
    out = redact_bytes(line)
    assert msgspec.json.decode(out) == {"content": f'quote "{REDACTED}" and bearer {REDACTED}'}


def test_a_short_placeholder_key_is_not_a_secret() -> None:
    add_secret("EMPTY")  # vLLM's placeholder: replacing "empty" would corrupt empty_reply
    assert redact("empty_reply EMPTY") == "empty_reply EMPTY"


def _server(mode: str) -> tuple[str, Any]:
    """An OpenAI-compatible server in a thread echoing the bearer token: ``reply`` quotes it
    in a 200 reply, ``error`` in a 401 body, lowercased."""

    async def chat(request: web.Request) -> web.Response:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if mode == "error":
            body = {"error": {"message": f"Incorrect API key provided: {token.lower()}."}}
            return web.json_response(body, status=401)
        content = f"Your key {token}, lower {token.lower()}, header Bearer {token}. Done."
        choice = {"index": 0, "message": {"role": "assistant", "content": content}}
        choice["finish_reason"] = "stop"
        usage = {"prompt_tokens": 4000, "completion_tokens": 5}
        return web.json_response({"id": "x", "model": "scripted/perfect", "choices": [choice],
                                  "usage": usage})  # fmt: skip

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"data": []})  # lists none: the preflight warns once (#49)

    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = runner.addresses[0][1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def stop() -> None:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)

    return f"http://127.0.0.1:{port}/v1", stop


def _leaks(root: Path, *texts: str) -> list[str]:
    needles = [f.encode() for f in FORMS]
    hits = [str(p) for p in root.rglob("*") if p.is_file() and any(n in p.read_bytes() for n in needles)]  # fmt: skip
    return hits + [f"output #{i}" for i, t in enumerate(texts) if any(f in t for f in FORMS)]


@pytest.mark.parametrize("mode", ["reply", "error"])
def test_an_echoing_server_never_gets_the_key_stored_or_printed(tmp_path: Path, mode: str) -> None:
    url, stop = _server(mode)
    try:
        data = grid_data(seeds="100", steps=5, arms=("raw",), api_key_env=ENV)
        data["endpoints"][0]["base_url"] = url
        grid_file = tmp_path / "grid.toml"
        grid_file.write_text(grid_toml(data))
        env = {ENV: KEY}
        checked = ladder("validate", str(grid_file), env=env)
        done = ladder("run", str(grid_file), "--out", str(tmp_path / "run"), "--no-live", env=env)
    finally:
        stop()
    outputs = [checked.stdout, checked.stderr, done.stdout, done.stderr]
    assert "Traceback" not in "".join(outputs)
    assert REDACTED in "".join(outputs) + "".join(
        p.read_text() for p in (tmp_path / "run").rglob("*.jsonl")
    ), outputs
    assert not _leaks(tmp_path, *outputs)


def test_a_usage_error_is_redacted_and_shown_never_obeyed() -> None:
    from ladder.errors import UsageError

    add_secret(KEY)
    e = UsageError(f"server said {KEY.lower()} \x1b]0;owned\x07")
    assert e.message == f"server said {REDACTED} \\x1b]0;owned\\x07"
