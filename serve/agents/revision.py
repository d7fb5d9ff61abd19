"""Reading the revision message: which step is cancelled, rewired and relaxed (by step text)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

import msgspec

from protocol import strings
from serve.agents.patterns import alternation, template_regex
from serve.agents.resolve import covering

__all__ = ["ParsedRevision", "parse_revision"]


class ParsedRevision(msgspec.Struct, frozen=True, kw_only=True):
    cancel: str | None
    rewires: dict[str, tuple[str, ...]]
    relax: tuple[str, str] | None


@lru_cache(maxsize=64)
def _patterns(texts: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    alt = alternation(texts)
    quoted = f"'{alt}'"
    return (
        template_regex(strings.REVISION_CANCEL, text=alt),
        template_regex(strings.REVISION_REWIRE, text=alt, deps=f"{quoted}(?:, {quoted})*"),
        template_regex(strings.REVISION_REWIRE_NONE, text=alt),
        template_regex(strings.REVISION_RELAX, text=alt, dropped=alt),
        re.compile(f"'({alt})'"),
    )


def parse_revision(message: str, texts: Mapping[str, str]) -> ParsedRevision:
    """The revision ``message`` states; ``texts`` maps step id -> brief text."""
    by_text = {t: v for v, t in texts.items()}
    cancel_p, rewire_p, none_p, relax_p, quoted_p = _patterns(covering(by_text))
    m = cancel_p.search(message)
    cancel = by_text.get(m["text"]) if m else None
    found = [
        (m.start(), m["text"], tuple(quoted_p.findall(m["deps"])))
        for m in rewire_p.finditer(message)
    ]
    found += [(m.start(), m["text"], ()) for m in none_p.finditer(message)]
    rewires = {
        by_text[text]: tuple(by_text[t] for t in deps if t in by_text)
        for _, text, deps in sorted(found)
        if text in by_text
    }
    r = relax_p.search(message)
    relax = None
    if r and r["text"] in by_text and r["dropped"] in by_text:
        relax = (by_text[r["text"]], by_text[r["dropped"]])
    return ParsedRevision(cancel=cancel, rewires=rewires, relax=relax)
