"""Helpers the layers above ``protocol`` share (issue #35): :func:`plural` for a count in a
message, :func:`markdown_table` for the report's and the analyses' tables, and
:func:`paused_gc` around bulk work on records.

Loading and scoring a grid builds millions of small objects that never form cycles; the
cyclic garbage collector would walk all of them again and again (more than doubling the time
to read a 10,000-episode log). :func:`paused_gc` pauses it around such bulk work; reference
counting still frees everything as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

__all__ = ["markdown_table", "md_text", "paused_gc", "plural"]

# OURS (#47): a name from a grid or a log is shown in report.md, never obeyed: "<" cannot
# open an HTML tag (a <script> in a model name), "|" cannot split a table's cell, a newline
# cannot end a table's row. (">" opens nothing inside a row; "->" stays readable.)
_MD = str.maketrans({"<": "&lt;", "|": "\\|", "\n": " ", "\r": " "})


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word`` in the number ``n`` takes: "1 line", "2 lines", "0 lines"."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def md_text(text: str) -> str:
    """``text`` (a name) as Markdown shows it and never interprets it (HTML, cells, links)."""
    return text.translate(_MD)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table of ``header`` and ``rows``, every cell through :func:`md_text`."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(md_text(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (restored afterwards)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
