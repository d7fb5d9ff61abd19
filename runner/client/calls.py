"""What one endpoint call is made of (split from :mod:`runner.client.endpoint`, issue #45): the
reply, the protocol the gates' helpers and memory services need, the infrastructure failure,
the running state of one chat call, and the typed embeddings body, with the two readings of a
successful body (a chat reply into its :class:`Reply`, an embeddings body into its vectors).
The client re-exports the public names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import msgspec

from protocol.records import CallRecord, Role, Termination
from runner.client.wire import MAX_TOKEN_COUNT, ChatReply, Retry
from runner.redact import redact

__all__ = [
    "CallFailed",
    "CallState",
    "ChatEndpoint",
    "EmbeddingsBody",
    "Reply",
    "read_embeddings",
    "reply_of",
]


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    content: str
    reasoning: str
    call: CallRecord


class ChatEndpoint(Protocol):
    """What the gates' helpers and the memory services need of :class:`Endpoint` (a test
    hands them a fake)."""

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
    ) -> Reply: ...


class CallFailed(Exception):
    """A call that failed for infrastructure reasons; ``termination`` names the reason."""

    def __init__(self, termination: Termination, message: str, attempts: int) -> None:
        super().__init__(message)
        self.termination = termination
        self.attempts = attempts


class _Vector(msgspec.Struct, frozen=True):
    embedding: list[float]
    index: int = 0


class _EmbeddingUsage(msgspec.Struct, frozen=True):
    prompt_tokens: int = 0


class EmbeddingsBody(msgspec.Struct, frozen=True):
    """An embeddings body, typed: anything else is malformed (retried)."""

    data: list[_Vector]
    usage: _EmbeddingUsage | None = None


@dataclass
class CallState:
    """The running state of one chat call across its attempts."""

    budget: int
    attempt: int = 0
    waited: float = 0.0
    server: float = 0.0
    last: str = ""
    affinity: str | None = None
    empty: bool = (
        False  # the last attempt's reply was empty  # the episode's key (runner.client.affinity)
    )


def reply_of(got: ChatReply, call: CallState, role: Role) -> Reply:
    """The reply of a successful chat response, with its call record. A reply quoting the
    key is redacted here, before the run or a log sees it."""
    return Reply(
        content=redact(got.content),
        reasoning=redact(got.reasoning) if got.reasoning else got.reasoning,
        call=CallRecord(
            role=role,
            prompt_tokens=got.prompt_tokens,
            completion_tokens=got.completion_tokens,
            wait_s=round(call.waited, 6) if call.waited else 0.0,  # no wait: no round (#50)
            server_s=round(call.server, 6),
            attempts=call.attempt,
            finish_reason=got.finish_reason,
            max_tokens=call.budget,
            cached_tokens=got.cached_tokens,
        ),
    )


def read_embeddings(body: bytes) -> tuple[list[list[float]], int]:
    """An embeddings body's vectors in input order and its prompt tokens (clamped); a body
    of another shape is :class:`Retry` (malformed, retried like a 5xx)."""
    try:
        data = msgspec.json.decode(body, type=EmbeddingsBody)
    except msgspec.DecodeError:  # ValidationError included
        raise Retry("malformed embeddings body") from None
    rows = sorted(data.data, key=lambda d: d.index)
    tokens = data.usage.prompt_tokens if data.usage else 0
    return [d.embedding for d in rows], min(max(tokens, 0), MAX_TOKEN_COUNT)
