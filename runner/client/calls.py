"""What one endpoint call is made of (split from :mod:`runner.client.endpoint`, issue #45): the
reply, the protocol the gates' helpers and memory services need, the infrastructure failure,
the running state of one chat call, and the typed embeddings body. The client re-exports the
public names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import msgspec

from protocol.records import CallRecord, Role, Termination

__all__ = ["CallFailed", "CallState", "ChatEndpoint", "EmbeddingsBody", "Reply"]


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
