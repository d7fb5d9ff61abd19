"""A count in a message (:func:`plural`), as every layer above ``protocol`` words one."""

from __future__ import annotations

__all__ = ["plural"]


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word`` in the number ``n`` takes: "1 line", "2 lines", "0 lines"."""
    return f"{n} {word if n == 1 else (many or word + 's')}"
