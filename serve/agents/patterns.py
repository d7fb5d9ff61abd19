"""Regular expressions built from the protocol's format strings, so no string is copied.

``template_regex(strings.DIRECTIVE_DONE, id=STEP_ID)`` escapes every literal part of the
format string and puts a named group where each ``{field}`` stands.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable

__all__ = ["STEP_ID", "WORK_ORDER", "alternation", "template_regex"]

STEP_ID = r"s\d+"
WORK_ORDER = r"#W\d{4}"


def template_regex(fmt: str, *, anchored: bool = False, **groups: str) -> re.Pattern[str]:
    """``fmt`` with each ``{name}`` replaced by ``(?P<name>groups[name])`` (``.+?`` if not
    given); ``{{``/``}}`` escapes are honoured. A field used twice matches the same text."""
    parts: list[str] = []
    seen: set[str] = set()
    for literal, field, _spec, _conv in string.Formatter().parse(fmt):
        parts.append(re.escape(literal))
        if field is None:
            continue
        if field in seen:
            parts.append(f"(?P={field})")
        else:
            seen.add(field)
            parts.append(f"(?P<{field}>{groups.get(field, '.+?')})")
    body = "".join(parts)
    return re.compile(f"^{body}$" if anchored else body)


def alternation(options: Iterable[str]) -> str:
    """A regex matching any of ``options`` literally, longest first."""
    opts = sorted(set(options), key=len, reverse=True)
    return "(?:" + "|".join(re.escape(o) for o in opts) + ")" if opts else "(?!)"
