"""The answer an agent gives: visible content, reasoning, and whether it is synthetic."""

from __future__ import annotations

import msgspec

__all__ = ["Answer"]


class Answer(msgspec.Struct, frozen=True, kw_only=True):
    content: str
    reasoning: str = ""
    synthetic: bool = False
