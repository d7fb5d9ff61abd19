"""Reading a logged directive line back into its kind, step and missing prerequisites.

``TurnRecord.directive`` holds the line the gate issued (``protocol.arms.render.render_directive``
of a ``protocol.strings.DIRECTIVE_*`` template). The patterns here are built from those
templates, so a wording change there is followed here without a second copy of the text.
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from protocol import strings

__all__ = ["DIRECTIVE_KINDS", "TRAP_KINDS", "DirectiveKind", "ParsedDirective", "parse_directive"]

DirectiveKind = Literal["done", "blocked", "cancelled", "redo", "eligible"]
DIRECTIVE_KINDS: tuple[DirectiveKind, ...] = ("done", "blocked", "cancelled", "redo", "eligible")
# Table 11's trap directives: the agent obeys by NOT executing the directed step. The redo
# directive authorizes execution and is not a trap (Table 11's caption).
TRAP_KINDS: tuple[DirectiveKind, ...] = ("done", "blocked", "cancelled")


class ParsedDirective(msgspec.Struct, frozen=True, kw_only=True):
    kind: DirectiveKind
    step: str
    missing: tuple[str, ...] = ()  # blocked: the prerequisites the directive names


def _pattern(template: str) -> re.Pattern[str]:
    escaped = re.escape(template)
    escaped = escaped.replace(r"\{id\}", r"(?P<id>\S+?)").replace(
        r"\{missing\}", r"(?P<missing>.*?)"
    )
    return re.compile(escaped)


_PATTERNS: tuple[tuple[DirectiveKind, re.Pattern[str]], ...] = (
    ("redo", _pattern(strings.DIRECTIVE_REDO)),
    ("done", _pattern(strings.DIRECTIVE_DONE)),
    ("blocked", _pattern(strings.DIRECTIVE_BLOCKED)),
    ("cancelled", _pattern(strings.DIRECTIVE_CANCELLED)),
    ("eligible", _pattern(strings.DIRECTIVE_ELIGIBLE)),
)


def parse_directive(text: str | None) -> ParsedDirective | None:
    """The kind, step and missing prerequisites of a logged directive line (None: none, or
    a line no directive template produces)."""
    if not text:
        return None
    for kind, pattern in _PATTERNS:
        m = pattern.search(text)
        if m:
            missing: tuple[str, ...] = ()
            if kind == "blocked":
                missing = tuple(x.strip() for x in m["missing"].split(",") if x.strip())
            return ParsedDirective(kind=kind, step=m["id"], missing=missing)
    return None
