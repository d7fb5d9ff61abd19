"""A scripted OpenAI-compatible endpoint that answers τ²-bench's prompts minimally.

It exists so every rung can run end to end with no model (the optional check): litellm, as
configured by τ²-bench, talks to it over real HTTP on loopback. Three models:

* ``scripted/tau2-user`` (the user simulator): its first turn is the scenario's reason for
  the call and known info (cut from the ``<scenario>`` block of τ²-bench's user prompt);
  every later turn is ``###STOP###``.
* ``scripted/tau2-naive`` (the agent): the domain's policy-blind agent
  (:attr:`tau2gate.domain.Domain.naive_agent`, e.g. :mod:`tau2gate.airline.scripted`).
* ``scripted/tau2-compiler`` (the compile): answers any prompt with the domain's reference
  rules in a code fence, so the compile path (prompt, HTTP, parse, validate) runs with no
  model.

:func:`user_reply` is pure; :class:`ScriptedServer` serves the three behind
``POST /v1/chat/completions`` (aiohttp, in a background thread, for τ²-bench's synchronous
runner).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from aiohttp import web

from tau2gate.domain import Domain, message_text
from tau2gate.domains import get_domain
from tau2gate.parse import rules_to_json
from tau2gate.reference import reference_rules

__all__ = [
    "AGENT_MODEL",
    "COMPILE_MODEL",
    "USER_MODEL",
    "ScriptedServer",
    "user_reply",
]

AGENT_MODEL = "scripted/tau2-naive"
USER_MODEL = "scripted/tau2-user"
COMPILE_MODEL = "scripted/tau2-compiler"
STOP = "###STOP###"


def user_reply(messages: Sequence[Mapping[str, Any]]) -> str:
    """The scripted user's next turn (its own past turns arrive with role ``assistant``)."""
    if any(m.get("role") == "assistant" for m in messages):
        return STOP
    system = next((message_text(m) for m in messages if m.get("role") == "system"), "")
    scenario = system.split("<scenario>")[-1].split("</scenario>")[0]
    opening = scenario.split("Task instructions:")[0].strip()
    return opening or "I need help with a reservation."


def _completion(model: str, n: int, reply: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    finish = "stop"
    if "tool_call" in reply:
        name, args = reply["tool_call"]
        message["content"] = None
        message["tool_calls"] = [
            {
                "id": f"call_{n:06d}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ]
        finish = "tool_calls"
    return {
        "id": f"chatcmpl-tau2-{n:06d}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class ScriptedServer:
    """The three scripted models on ``http://127.0.0.1:<port>/v1`` (a background thread), for
    ``domain`` (default airline): its naive agent and its reference rules."""

    def __init__(self, domain: Domain | str | None = None) -> None:
        self.domain = get_domain(domain)
        self.requests = 0
        self.base_url = ""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        model, messages = body.get("model", ""), body.get("messages", [])
        self.requests += 1
        if model.endswith(USER_MODEL):
            reply: dict[str, Any] = {"content": user_reply(messages)}
        elif model.endswith(AGENT_MODEL):
            reply = self.domain.naive_agent(messages)
        elif model.endswith(COMPILE_MODEL):
            reply = {
                "content": "```json\n" + rules_to_json(reference_rules(self.domain).rules) + "\n```"
            }
        else:
            return web.json_response({"error": {"message": f"no model {model}"}}, status=404)
        return web.json_response(_completion(model, self.requests, reply))

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._start())
        self._ready.set()
        self._loop.run_forever()

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
