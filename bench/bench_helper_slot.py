"""Helpers that do not evict the agent (issue #41): the agent's re-evaluated prompt tokens per
turn on a one-slot llama.cpp-like server, helpers in the agent's slot against their own.

On a llama.cpp server each slot keeps the tokens of its last request (prompt and reply) and
re-uses the longest common prefix of the next request it serves; every other prompt token is
evaluated again ("prefix-match hit, remaining N prompt tokens"). With one slot, each matcher
call between two agent turns replaces the agent's transcript in it, so the next agent turn
re-evaluates its whole prompt; the real run measured 68% of all evaluated prompt tokens as
such re-evaluations and a directive turn of 90.8 s against 9.8 s for raw.

Here the real runner plays directive-arm episodes (the perfect agent, a matcher call on every
ask turn) against the embedded scripted endpoint twice, the grid's model without and with
``agent_slot = 0, helper_slot = 1`` (each request then carries llama.cpp's ``id_slot``); every
request is recorded with its slot, in arrival order, and replayed through the slot model (a
request without ``id_slot`` takes slot 0, as a one-slot server has no other). Tokens are
cl100k tokens of the messages in a chat layout. Figure: the agent's prompt tokens
re-evaluated per turn, shared slot over own slot (the latency model charges prefill per
uncached token, so the ratio is the agent's prefill time ratio too).
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench._common import row, scratch
from protocol.episode.generate import generate
from protocol.records import Role
from runner.arms import EpisodeContext, load_arms
from runner.client.body import Transcript
from runner.client.endpoint import Endpoint, Reply
from runner.execution.agent import agent_call
from runner.execution.episode_loop import run_episode
from runner.gates.helper_models import Helpers
from runner.grid.expand import Grid, expand, parse_grid
from serve.endpoint.app import start_server, stop_server
from serve.endpoint.tokens import encoding

__all__ = ["SlotModel", "run"]

TARGET = 2.0  # shared over own slot: helpers that share the slot at least double the agent's


class Recording(Endpoint):
    """An endpoint that notes every chat request: (role, id_slot, prompt tokens, reply)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log: list[tuple[Role, int | None, list[int], list[int]]] = []

    async def chat(
        self,
        model: str,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int,
        role: Role = "agent",
        thinking: bool = False,
        extra: Mapping[str, object] | None = None,
        temperature: float = 0.0,
        affinity: str | None = None,
        headers: Mapping[str, str] | None = None,
        transcript: Transcript | None = None,
    ) -> Reply:
        reply = await super().chat(
            model,
            messages,
            max_tokens=max_tokens,
            role=role,
            thinking=thinking,
            extra=extra,
            temperature=temperature,
            affinity=affinity,
            headers=headers,
            transcript=transcript,
        )
        slot = (extra or {}).get("id_slot")
        enc = encoding()
        prompt = [
            t for m in messages for t in enc.encode_ordinary(f"<|{m['role']}|>\n{m['content']}\n")
        ]
        prompt += enc.encode_ordinary("<|assistant|>\n")
        self.log.append(
            (
                role,
                slot if isinstance(slot, int) else None,
                prompt,
                enc.encode_ordinary(reply.content),
            )
        )
        return reply


class SlotModel:
    """llama.cpp's slots: each keeps its last request's tokens; a request re-uses the longest
    common prefix and evaluates the rest."""

    def __init__(self) -> None:
        self.slots: dict[int, list[int]] = {}

    def serve(self, slot: int, prompt: list[int], reply: list[int]) -> int:
        """The prompt tokens evaluated for this request (its uncached suffix)."""
        kept = self.slots.get(slot, [])
        common = 0
        for a, b in zip(kept, prompt, strict=False):
            if a != b:
                break
            common += 1
        self.slots[slot] = prompt + reply
        return len(prompt) - common


def _grid(url: str, seeds: str, slots: bool) -> Grid:
    model: dict[str, object] = {"name": "scripted/perfect", "endpoint": "bench"}
    if slots:
        model.update(agent_slot=0, helper_slot=1)
    return parse_grid(
        {
            "run": {
                "seeds": seeds,
                "graphs": [{"steps": 10, "density": 0.15}],
                "arms": ["directive"],
            },
            "endpoints": [{"name": "bench", "base_url": url, "max_in_flight": 1}],
            "models": [model],
            "decoding": {"attempts": 2, "backoff_s": 0.05, "timeout_s": 120},
        },
        source="bench",
    )


async def _play(grid: Grid, out: Path) -> list[tuple[Role, int | None, list[int], list[int]]]:
    """Every request of the grid's episodes, one episode after another, in arrival order."""
    load_arms({"directive"})
    url = grid.endpoints[0].urls()[0]
    ep = Recording([url], max_in_flight=1, name="bench")
    async with ep:
        helpers = Helpers(grid, out, {"bench": ep})
        model = grid.models[0]
        for task in expand(grid):
            ctx = EpisodeContext(
                episode=generate(task.spec),
                cell=task.cell,
                agent=agent_call(ep, model, grid),
                helpers=helpers,
            )
            record = await run_episode(ctx)
            assert record.termination == "completed", record.error
        return ep.log


def _per_turn(log: Sequence[tuple[Role, int | None, list[int], list[int]]]) -> list[int]:
    """The agent's re-evaluated prompt tokens per agent request, replayed in order."""
    model = SlotModel()
    agent: list[int] = []
    for role, slot, prompt, reply in log:
        evaluated = model.serve(slot or 0, prompt, reply)
        if role == "agent":
            agent.append(evaluated)
    return agent


async def _main(seeds: str) -> dict[str, Any]:
    runner, url = await start_server()
    try:
        with scratch("slot-shared") as a, scratch("slot-own") as b:
            shared = await _play(_grid(url, seeds, slots=False), a)
            own = await _play(_grid(url, seeds, slots=True), b)
    finally:
        await stop_server(runner)
    assert all(s is None for _, s, _, _ in shared)
    assert {s for r, s, _, _ in own if r != "agent"} == {1}
    return {"shared": _per_turn(shared), "own": _per_turn(own)}


def run(quick: bool = False) -> dict[str, Any]:
    seeds = "100" if quick else "100-103"
    got = asyncio.run(_main(seeds))
    shared = statistics.fmean(got["shared"])
    own = statistics.fmean(got["own"])
    ratio = shared / own if own else None
    rows = [
        row(
            "agent prompt tokens re-evaluated per turn, helpers in the agent's slot",
            round(shared, 1),
            "measured",
            None,
        ),
        row(
            "agent prompt tokens re-evaluated per turn, helper_slot = 1",
            round(own, 1),
            "measured",
            None,
        ),
        row(
            "re-evaluated per turn, shared slot / own slot (one-slot llama.cpp-like model)",
            None if ratio is None else round(ratio, 2),
            f">= {TARGET:g}",
            None if ratio is None else ratio >= TARGET,
        ),
    ]
    return {
        "case": "helper_slot",
        "rows": rows,
        "agent_turns": len(got["shared"]),
        "shared_per_turn": shared,
        "own_per_turn": own,
    }
