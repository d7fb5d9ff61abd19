"""Markdown tables for the report and the analyses (:func:`markdown_table`), every cell shown
and never interpreted (:func:`md_text`)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["markdown_table", "md_text"]

# OURS (#47): a name from a grid or a log is shown in report.md, never obeyed: "<" cannot
# open an HTML tag (a <script> in a model name), "|" cannot split a table's cell, a newline
# cannot end a table's row. (">" opens nothing inside a row; "->" stays readable.)
_MD = str.maketrans({"<": "&lt;", "|": "\\|", "\n": " ", "\r": " "})


def md_text(text: str) -> str:
    """``text`` (a name) as Markdown shows it and never interprets it (HTML, cells, links)."""
    return text.translate(_MD)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table of ``header`` and ``rows``, every cell through :func:`md_text`."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(md_text(c) for c in r) + " |" for r in rows]
    return "\n".join(out)
