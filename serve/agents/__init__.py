"""Rule-based agents that read the brief and the transcript as an LLM would."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from serve.agents import always_book, perfect, prerequisites, synthetic
from serve.agents.answer import Answer
from serve.agents.gate_answers import helper_answer
from serve.agents.handoff import is_note_request
from serve.agents.memory import mem0_answer
from serve.agents.note import note_answer
from serve.agents.pack_reader import read_answer
from serve.agents.reading import Message, Reading, build_view
from serve.agents.rewrite import rewrite_answer
from serve.agents.tool_results import acknowledge, is_tool_results

__all__ = [
    "Answer",
    "Reading",
    "answer",
]


def answer(
    policy: str,
    params: Mapping[str, float],
    messages: Sequence[Message],
    *,
    digest: str,
    thinking: bool = False,
    reading: Reading | None = None,
    draw: str | None = None,
) -> Answer:
    """What ``policy`` replies to ``messages``: a helper answer for a helper prompt (the
    gates' compiler and matcher, mem0's memory extraction, the held-out rewriter), otherwise
    the agent's turn. ``reading``: the transcript read up to the last message, when the
    caller carries it (``serve.endpoint.conversation``). ``draw``: the runner's draw key
    (:mod:`protocol.draws`), the seed of the synthetic agent's dice when given."""
    helper = (
        mem0_answer(messages)
        or helper_answer(messages, params, digest)
        or rewrite_answer(messages, params, digest)
        or read_answer(messages)  # `ladder domain check --model` (issue #46)
    )
    if helper is not None:
        return msgspec.structs.replace(helper, synthetic=policy == "synthetic")
    if messages and messages[-1][0] == "user" and is_note_request(messages[-1][1]):
        # the runner's request for a handoff note at a session's end (issue #48)
        return note_answer(policy, params, messages, digest=digest, draw=draw)
    if messages and messages[-1][0] == "user" and is_tool_results(messages[-1][1]):
        # the perfect agent asks the status tool before it retries a timeout (issue #37)
        careful = policy not in ("prerequisites", "always-book", "synthetic")
        answered = acknowledge(messages[-1][1], messages[:-1], careful=careful)
        return msgspec.structs.replace(answered, synthetic=policy == "synthetic")
    # the perfect agent also reads its own narration of a booking (docs/probe.md)
    view = build_view(
        messages,
        narration=policy not in ("prerequisites", "always-book", "synthetic"),
        kept=reading,
    )
    if policy == "prerequisites":
        return prerequisites.respond(view)
    if policy == "always-book":
        return always_book.respond(view)
    if policy == "synthetic":
        return synthetic.respond(view, params, digest, thinking, draw)
    return perfect.respond(view)
