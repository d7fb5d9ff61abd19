"""Text from a model or a server, made safe to show on a terminal or in a report (OURS).

A reply, an error message or a log line may carry terminal escape sequences (``ESC]0;``
retitles the window, ``ESC[2J`` clears the screen, colour codes repaint a verdict): shown,
never obeyed. :func:`visible` renders every control character (C0 but tab and, where kept,
newline; DEL; C1; the bidirectional overrides that reorder a line, the zero-width and
direction marks that hide or reorder text) as a visible escape such
as ``\\x1b`` or ``\\u202e``, in one linear pass. Pure: no I/O.
"""

from __future__ import annotations

import re

__all__ = ["control_problems", "first_control", "one_line", "visible"]

# the bidirectional embeddings, overrides and isolates, and the invisible marks and joiners
# that reorder or hide text: LRM/RLM (U+200E/F), ALM (U+061C), zero-width space and joiners
# (U+200B-U+200D), word joiner and invisible operators (U+2060-U+2064), the BOM (U+FEFF)
_BIDI = "\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
_CONTROL_OR_NEWLINE = re.compile(f"[\x00-\x08\x0a-\x1f\x7f-\x9f{_BIDI}]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def visible(text: str, *, newlines: bool = True) -> str:
    """``text`` with its control characters shown as escapes (newlines kept when
    ``newlines``, tabs always)."""
    pattern = _CONTROL if newlines else _CONTROL_OR_NEWLINE
    return pattern.sub(_escape, text)


def first_control(text: str, *, newlines: bool = True) -> str | None:
    """The first control character of ``text`` (C0 but tab and newline, DEL, C1, bidi,
    zero-width) as its visible escape, or None: a name or a wording holding one is refused
    (#47)."""
    m = (_CONTROL if newlines else _CONTROL_OR_NEWLINE).search(text)
    return _escape(m) if m else None


def control_problems(value: object, *, newlines: bool = True) -> list[str]:
    """One line per string of ``value`` (decoded TOML or JSON: a grid, a pack), keys
    included, holding a control character (a newline too unless ``newlines``), naming
    where (``models[0].name``) and which.
    Iterative: linear in ``value``, whatever its nesting."""
    out: set[str] = set()
    todo: list[tuple[str, object]] = [("", value)]
    while todo:
        path, node = todo.pop()
        if isinstance(node, dict):
            todo += [(f"{path}.{k}" if path else str(k), v) for k, v in node.items()]
            todo += [(path or "a key", k) for k in node]
        elif isinstance(node, list | tuple):
            todo += [(f"{path}[{i}]", v) for i, v in enumerate(node)]
        elif isinstance(node, str) and (c := first_control(node, newlines=newlines)):
            out.add(f"{path} holds the control character {c}")
    return sorted(out)


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one visible line of at most ``limit`` characters (an error message)."""
    out = visible(text[: limit * 2], newlines=False)
    return out if len(out) <= limit else out[: limit - 3] + "..."
