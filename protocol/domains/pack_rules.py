"""The rules a domain pack is held to (pure): every rule the generator, the scripted user and
the matcher rely on (:func:`check_pack`, one problem per line naming the source, the template
and the field), the pool's fixed sizes, and the ties an independent resolver finds
(:func:`pack_overlaps`). :mod:`protocol.domains.packs` parses a pack and applies them."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable

from protocol.domains.shape import DomainPool, Template
from protocol.domains.words import own_words, reads_as, stem, stems

__all__ = [
    "LEGACY_WORDINGS",
    "MIN_FILLERS",
    "PARAPHRASES",
    "PER_PHASE",
    "PHASES",
    "WORDING_FIELDS",
    "check_pack",
    "format_fields",
    "pack_overlaps",
]

# The paper's pools (Section 4.1, Appendix E.3): 18 templates, three per phase 0..5, the same
# per-phase histogram in every domain, so the sampler induces one DAG-shape distribution.
PHASES = range(6)
PER_PHASE = 3
PARAPHRASES = 3  # Appendix A.5: "Each step template has three paraphrases"
WORDING_FIELDS = ("asks", "premature", "redo_probes", "status", "legit_redo")
# Lists only generators 1-2 read (issue #37): optional, three wordings or none. A pack without
# them serves generators 3 on; protocol.episode.versions.check_spec refuses it for generators 1-2.
LEGACY_WORDINGS = ("premature",)
# The receipt space (protocol.state.receipts): a wording that looks like a completion code or a work
# order could be read as a receipt or a second work order.
_RECEIPTISH = re.compile(r"RC\s*[-–—]?\s*\d|#\s*W\s*\d", re.IGNORECASE)
_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
# What only the arms, the world or a forwarded message write (issue #37; OURS): a tagged
# block ("[TASK-STATE]", "[RECEIPT]", ...), a checklist entry, a ledger or ACTION line, a ref
# line, a quoted or forwarded line. A pack's text that holds one could be read as state text;
# a line opening "Forwarded" is where the brief's clause says third-party text begins (the
# scripted agents read it so: serve/agents/transcript.py), so a wording that opens so would
# read as no request of the user's.
_RESERVED = re.compile(
    r"\[[A-Z][A-Z0-9 _\-]+\]|^\s*-\s*s\d+\s*:|^\W*ledger\b|\bACTION\s*\{|\bref\s+\S+/"
    r"|^\s*>|forwarded message|^[\s\-]*forwarded\b",
    re.IGNORECASE | re.MULTILINE,
)
# Redo probes are worded as plain asks (A.3: no reason, no repetition); a legitimate redo
# carries an explicit authorization (docs/protocol.md).
_REPETITION = re.compile(
    r"\b(again|redo|re-do|re-?run|repeat\w*|once more|another time|one more time)\b", re.I
)
_AUTHORIZATION = re.compile(r"\bauthori[sz]\w*", re.IGNORECASE)
MIN_FILLERS = 3  # OURS: a pack's filler lines, at least (the generator draws one per filler)

_Bad = Callable[[str, str], None]  # where, message


def format_fields(text: str) -> list[str]:
    """The placeholders of a format string; a malformed one (``{wo)``), a format spec or a
    conversion (``{wo:d}``, ``{wo!r}``, ``{wo:{wo}}``) is reported as a field ``"?<reason>"``,
    so every check refuses it with one line and ``str.format`` never sees it."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as e:
        return [f"?malformed ({e})"]
    out: list[str] = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if spec or conversion:
            out.append(
                f"?{{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}"
            )
        else:
            out.append(name)
    return out


def _meaning(field: str, wording: str) -> str | None:
    """What a wording of ``field`` says that its kind forbids (None: nothing)."""
    if _RESERVED.search(wording):
        return "reads like an arm's, a receipt's or a forwarded message's text (reserved)"
    if "\n" in wording or "\r" in wording:
        return "spans several lines (one line per wording)"
    if field == "redo_probes" and (m := _REPETITION.search(wording)):
        return f"a redo probe is a plain ask of a finished step; {m.group(0)!r} asks for a redo"
    if field == "legit_redo" and not _AUTHORIZATION.search(wording):
        return "a legitimate redo needs an explicit authorization (e.g. 'I explicitly authorize')"
    if field == "status" and "?" not in wording:
        return "a status wording is a question (it has no '?')"
    return None


def check_pack(pool: DomainPool, source: str) -> list[str]:
    """Every rule the generator relies on, one problem per line (empty: the pack is usable)."""
    out: list[str] = []

    def bad(where: str, msg: str) -> None:
        out.append(f"{source}: {where}: {msg}")

    _check_pool(pool, bad)
    # each step's own words: its content words no other template's text uses
    wordings = _Wordings(pool, own_words(pool), bad)
    for i, t in enumerate(pool.templates):
        wordings.check_template(i, t)
    _check_frames(pool, bad)
    _check_fillers(pool, wordings.own, bad)
    return out


def _check_pool(pool: DomainPool, bad: _Bad) -> None:
    """The pool's name, its per-phase histogram and its distinct slugs and texts."""
    if not _SLUG.match(pool.name):
        bad("name", f"{pool.name!r} is not a lowercase hyphenated name")
    # the sampler: up to 18 templates drawn at once, edges only from lower to higher phases,
    # and one per-phase histogram in every domain (Appendix E.3)
    phases = Counter(t.phase for t in pool.templates)
    if phases != Counter({p: PER_PHASE for p in PHASES}):
        hist = ", ".join(f"{p}: {n}" for p, n in sorted(phases.items()))
        bad(
            "templates",
            f"{len(pool.templates)} templates by phase {{{hist}}}; need "
            f"{len(PHASES) * PER_PHASE}, {PER_PHASE} in each phase 0..{len(PHASES) - 1}",
        )
    for slug, n in Counter(t.slug for t in pool.templates).items():
        if n > 1:
            bad(f"template {slug}", f"slug: used by {n} templates")
    for text, n in Counter(t.text for t in pool.templates).items():
        if n > 1 and text:
            bad("templates", f"text {text!r} is used by {n} templates")


class _Wordings:
    """The checks of each template's text and wordings, with what they share: each step's own
    words, how many templates use each wording, and which template used one first."""

    def __init__(self, pool: DomainPool, own: list[frozenset[str]], bad: _Bad) -> None:
        self.pool, self.own, self.bad = pool, own, bad
        self.users = Counter(
            w for t in pool.templates for f in WORDING_FIELDS for w in getattr(t, f) if w
        )
        self.owner: dict[str, str] = {}

    def check_template(self, i: int, t: Template) -> None:
        where, bad = f"template {t.slug}", self.bad
        if not _SLUG.match(t.slug):
            bad(where, "slug: not lowercase words joined by hyphens")
        if format_fields(t.text) or _RECEIPTISH.search(t.text) or _RESERVED.search(t.text):
            bad(where, "text: holds a placeholder, a receipt-like code or a reserved marker")
        if not t.text:
            bad(where, "text: empty")
        elif not self.own[i]:
            bad(where, "text: no word of its own (every content word is in another step's text)")
        for f in WORDING_FIELDS:
            if f in LEGACY_WORDINGS and not getattr(t, f):
                continue  # optional: only generators 1-2 read it
            if not any(getattr(t, f)):
                bad(where, f"{f}: empty ({PARAPHRASES} wordings to write)")
                continue
            seen: set[str] = set()
            for k, w in enumerate(getattr(t, f)):
                self._check_wording(i, t, f"{f}[{k}]", f, w, seen)
                seen.add(w)

    def _check_wording(
        self, i: int, t: Template, at: str, field: str, w: str, seen: set[str]
    ) -> None:
        where, bad, own = f"template {t.slug}", self.bad, self.own
        if (names := format_fields(w)) != ["wo"]:
            bad(where, f"{at}: needs exactly one {{wo}} and no other placeholder, has {names}")
        if _RECEIPTISH.search(w.replace("{wo}", "")):
            bad(where, f"{at}: holds a receipt-like code (RC-dddd or #Wdddd)")
        if (why := _meaning(field, w)) is not None:
            bad(where, f"{at}: {why}")
        if w in seen:
            bad(where, f"{at}: the same wording twice in {field}")
        if self.users[w] > 1:  # the matcher could not tell the steps apart
            if (prev := self.owner.setdefault(w, t.slug)) != t.slug:
                bad(where, f"{at}: the same wording as template {prev}")
            return
        if own[i] and not any(stem(x) in stems(w) for x in own[i]):
            bad(where, f"{at}: names none of the step's key words ({', '.join(sorted(own[i]))})")
            return
        (best, j), *rest = reads_as(w, own, i)
        mine = next(score for score, x in [(best, j), *rest] if x == i)
        if best > mine:  # a tie is an overlap (pack_overlaps), not a refusal
            other = self.pool.templates[j]
            bad(
                where,
                f"{at}: reads as template {other.slug} more than as its own "
                f"(it names {mine:.0f} of its key words {', '.join(sorted(own[i]))}; "
                f"{best:.0f} of {other.slug}'s)",
            )


def _check_frames(pool: DomainPool, bad: _Bad) -> None:
    """The re-ask and ambiguous frames: their placeholders, no reserved marker or receipt."""
    for i, w in enumerate(pool.re_asks):
        if sorted(format_fields(w)) != ["text", "wo"]:
            bad(f"re_asks[{i}]", "needs exactly one {text} and one {wo}")
        elif _RESERVED.search(w) or _RECEIPTISH.search(w.replace("{wo}", "")):
            bad(f"re_asks[{i}]", "holds a reserved marker or a receipt-like code")
    for i, w in enumerate(pool.ambiguous):
        if sorted(format_fields(w)) != ["a", "b", "wo"]:
            bad(f"ambiguous[{i}]", "needs exactly one {a}, one {b} and one {wo}")
        elif _RESERVED.search(w) or _RECEIPTISH.search(w.replace("{wo}", "")):
            bad(f"ambiguous[{i}]", "holds a reserved marker or a receipt-like code")


def _check_fillers(pool: DomainPool, own: list[frozenset[str]], bad: _Bad) -> None:
    """Enough distinct fillers, each one line naming no step."""
    if len(pool.fillers) < MIN_FILLERS:
        bad("fillers", f"{len(pool.fillers)} fillers; need at least {MIN_FILLERS}")
    for w, n in Counter(pool.fillers).items():
        if n > 1:
            bad("fillers", f"{w!r} is listed {n} times")
    for i, w in enumerate(pool.fillers):
        if format_fields(w) or _RECEIPTISH.search(w):
            bad(f"fillers[{i}]", "carries a placeholder or a work order")
        elif _RESERVED.search(w) or "\n" in w:
            bad(f"fillers[{i}]", "holds a reserved marker or several lines")
        named = stems(w)
        steps = [
            t.slug
            for t, keys in zip(pool.templates, own, strict=True)
            if keys and sum(stem(x) in named for x in keys) >= min(2, len(keys))
        ]
        if steps:
            bad(f"fillers[{i}]", f"names step {steps[0]} (two of its key words, or its only one)")


def pack_overlaps(pool: DomainPool) -> list[tuple[str, str, str]]:
    """(template, wording field[index], other template) for each wording that names as many
    of another template's own key words as of its own (the independent resolver ties)."""
    own = own_words(pool)
    out: list[tuple[str, str, str]] = []
    for i, t in enumerate(pool.templates):
        for f in WORDING_FIELDS:
            for k, w in enumerate(getattr(t, f)):
                scores = {x: score for score, x in reads_as(w, own, i)}
                ties = [j for j, sc in scores.items() if j != i and sc and sc == scores[i]]
                out += [(t.slug, f"{f}[{k}]", pool.templates[j].slug) for j in ties]
    return out
