"""Receipt parsing: ref lines, bookings, self-ledger lines, and tool ACTION lines.

A booking is the line ``ref <completion code>/<work order>`` in the agent's visible reply,
e.g. ``ref RC-2048/#W1234`` (Section 3.2 "Receipts"; Appendix A.1). This module extracts such
lines tolerantly (:func:`find_refs`), sorts them into bookings, re-displays and unknown codes
(:func:`classify`), and reads the self-ledger's ``LEDGER <code> <STATUS>`` lines
(:func:`parse_ledger`) and the real-tool harness's ``ACTION {...}`` lines (:func:`find_actions`).
Pure functions over strings; no I/O.

Extraction decisions (:func:`find_refs`)
----------------------------------------
* The keyword is required. A ref is the word ``ref`` (any case: ``ref``, ``Ref``, ``REF``)
  followed by a completion code, a slash and a work order, in that order, on one line. A bare
  ``RC-1234/#W1234`` without the keyword does NOT count: the protocol line is
  ``ref <code>/<work order>``, and bare pairs are how agents cite earlier receipts in prose
  ("your earlier RC-1234/#W1234").
* The keyword is the whole word ``ref``: ``reference RC-1234/#W1234``, ``refs ...``,
  ``xref ...`` do NOT count. "Reference" is a prose word ("for reference: ..."), not the
  protocol keyword; ``for reference: ref RC-1234/#W1234`` does count (it is then a matter for
  decline-aware scoring, :mod:`scoring.replay.declines`).
* Between the keyword and the code: one to sixteen characters of spacing, markdown
  (``*``, ``_``, backquote, ``~``), ``:``, ``.``, ``=``, ``#``, quotes, an opening bracket or a
  dash. So ``ref: ``, ``ref. ``, ``**ref** ``, ``` `ref` ``` and ``ref -- `` all work; the
  keyword glued to the code (``refRC-1234``) does not.
* Markdown around the whole line is tolerated because it is never part of the match: bold
  ``**...**`` and ``__...__``, italics, code spans, fenced code blocks, block quotes ``>``,
  headings, list bullets ``-``, ``*``, ``1.``; so is surrounding prose ("Booked: ref
  RC-1234/#W1234.") and trailing punctuation.
* Completion code: ``RC`` (any case), then optionally spaces and one hyphen, dash, or
  underscore (``-`` ``‐`` ``‑`` ``‒`` ``–`` ``—`` ``―`` ``−`` ``﹣`` ``－`` ``_``), then
  exactly four ASCII digits not followed by another digit. ``RC 1234``, ``rc-1234``,
  ``RC–1234`` and ``RC1234`` count; ``RC-123`` and ``RC-12345`` do not. Normalized to
  ``RC-dddd``.
* Slash: ``/``, full-width ``／``, ``∕`` or ``⁄``, with optional spaces and markdown on either
  side (``RC-1234 / #W1234``, ``**RC-1234**/**#W1234**``). A missing slash (a code and a work
  order mentioned separately, e.g. "code RC-1234 under work order #W1234") does not count.
* Work order: optional ``#`` (or ``＃``, or markdown-escaped ``\\#``), optional spaces,
  ``W`` (any case), optionally one dash, exactly four ASCII digits not followed by a letter or
  digit. ``# W1234``, ``#w1234`` and ``W1234`` count (the keyword and the slash already make
  the pair unambiguous); ``#W123`` and ``#W12345`` do not. Normalized to ``#Wdddd``.
* Reversed order (``ref #W1234/RC-1234``) does not count. A ref never spans a line break.
* Several refs on one line are all found, each needing its own keyword: in
  ``ref RC-1111/#W1 ..., RC-2222/#W1`` only the first counts.
* ``Ref.start`` / ``Ref.end`` span the match from the keyword to the last work-order digit;
  ``Ref.line`` is the whole line holding it (no newline, a trailing ``\\r`` dropped).
* Not normalized: full-width letters or digits (``ＲＣ``), which no agent has been seen to
  write; spans stay offsets into the original text.
* Fast path: a reply whose lowercase form lacks ``"ref"`` yields ``[]`` without running the
  regex. The pattern only matches ASCII ``r``/``e``/``f`` in any case, so this is exact.

Classification decisions (:func:`classify`)
-------------------------------------------
* The work order is the idempotency key. A ref whose work order is not the current turn's
  (or any ref when the turn carries none) is a re-display, never an execution.
* A ref with the current work order and a known code is a booking
  ``Booking(step=<step id>, code=<RC-dddd>, work_order=<#Wdddd>)``; with an unknown code it
  goes to ``unknown`` (a booking attempt with a wrong code: the caller decides what it is).
* Every category is deduplicated on the normalized (code, work order) pair, first
  appearance kept: the same ref written twice in one reply is ONE booking (and one
  re-display, one unknown). Two different codes under the current work order are two
  bookings. Order of first appearance is kept in each tuple.
* The ``codes`` keys and ``work_order`` are normalized the same way as refs (so a compiled
  ``"rc 1234"`` still matches); keys that do not parse as a code (e.g. an empty compiled code)
  are ignored; when two keys normalize to the same code the first in mapping order wins.

Ledger decisions (:func:`parse_ledger`)
---------------------------------------
* A ledger entry is the word ``LEDGER`` (any case) then a completion code (written as refs
  may write it: ``RC-1234``, ``rc 1234``, ``RC_1234``; normalized to ``RC-1234``; Section
  3.3: "LEDGER code DONE/CANCELLED/TODO reply lines") then a status ``DONE``,
  ``CANCELLED`` (or ``CANCELED``) or ``TODO`` (or ``TO DO`` / ``TO-DO``), any case, normalized
  to upper case ``DONE`` / ``CANCELLED`` / ``TODO``. Between the parts: spaces, markdown,
  ``:``, ``=``, ``|``, brackets, dashes or arrows, on one line; so
  ``- **LEDGER RC-1234: done**`` and ``LEDGER | RC-1234 | DONE`` count. Entries may sit anywhere on a line, several per line.
  Unknown statuses and entries without a code are skipped (a step id in place of the code,
  ``LEDGER s3 DONE``, is not an entry). The last entry for a code wins; the self-ledger arm
  maps codes to steps through the brief's codes.

Action decisions (:func:`find_actions`)
---------------------------------------
* An action is the word ``ACTION`` (any case) followed, after optional spaces, markdown,
  ``:`` or ``>``, by a JSON object on the same line. The object is decoded with the standard
  JSON decoder from its opening brace (trailing text such as a closing backquote is ignored);
  it must hold a non-empty string ``"tool"`` and a string ``"work_order"``; extra keys are
  ignored. Malformed JSON (single quotes, typographic quotes, a missing key) is skipped.
* The work order is normalized to ``#Wdddd`` when it parses as one; otherwise it is kept
  verbatim (stripped) so the caller sees the wrong work order. The tool name is stripped.
* The protocol asks for one ACTION per line; several on one line are all returned, in order.
* ``Action.start`` / ``Action.end`` span the keyword through the closing brace.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from itertools import accumulate, count
from operator import add

import msgspec

from protocol.records import Booking

__all__ = [
    "Action",
    "Receipts",
    "Ref",
    "classify",
    "find_actions",
    "find_refs",
    "normalize_code",
    "normalize_work_order",
    "parse_ledger",
    "read_bookings",
    "ref_matches",
    "ref_matches_each",
    "ref_matches_joined",
    "text_starts",
]


class Ref(msgspec.Struct, frozen=True, kw_only=True):
    """One ref line found in a reply: ``ref <code>/<work order>``."""

    code: str  # normalized RC-dddd
    work_order: str  # normalized #Wdddd
    start: int  # span of the match in the reply
    end: int
    line: str  # the whole line of the reply the match sits on


class Receipts(msgspec.Struct, frozen=True, kw_only=True):
    """The refs of one reply, sorted against the current turn's work order."""

    bookings: tuple[Booking, ...]
    redisplays: tuple[Ref, ...]
    unknown: tuple[Ref, ...]


class Action(msgspec.Struct, frozen=True, kw_only=True):
    """One ``ACTION {"tool": ..., "work_order": ...}`` line of the real-tool protocol."""

    tool: str
    work_order: str  # normalized #Wdddd when it parses, else verbatim
    start: int
    end: int


# --- patterns ----------------------------------------------------------------------------

_DASH = "\\-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"  # - ‐ ‑ ‒ – — ― − ﹣ －
_SP = " \\t\u00a0"
_MD = "*_`~"
_CODE_CORE = rf"[Rr][Cc][{_SP}]*(?:[{_DASH}_][{_SP}]*)?(?P<code>[0-9]{{4}})(?![0-9])"
_WO_CORE = (
    rf"(?:\\?[#\uff03])?[{_SP}]*[Ww][{_SP}]*(?:[{_DASH}][{_SP}]*)?(?P<wo>[0-9]{{4}})(?![0-9A-Za-z])"
)

_AFTER_KEYWORD = (
    rf"[{_SP}{_MD}:.=#\"'“”‘’(\[{_DASH}]{{1,16}}"  # keyword separator
    + _CODE_CORE
    + rf"[{_SP}{_MD}\\]*[/\uff0f\u2215\u2044][{_SP}{_MD}]*"  # the slash
    + _WO_CORE
)
_REF = re.compile(
    # the keyword, a whole word; its first letter leads, so the search skips to each r/R
    r"[Rr](?<![0-9A-Za-z][Rr])[Ee][Ff](?![0-9A-Za-z])" + _AFTER_KEYWORD
)
# The same pattern for lowered ASCII text: the keyword a literal ``ref``, which the engine
# finds by its fast literal search (#50). In ASCII text ``lower`` changes only A-Z, which
# every letter of the pattern and its look-arounds match in either case, and the digits
# of the code and work order not at all: its matches in the lowered text are _REF's in the
# text, the same spans and groups.
_REF_LOWER = re.compile(r"ref(?<![0-9A-Za-z]ref)(?![0-9A-Za-z])" + _AFTER_KEYWORD)
_CODE_ONLY = re.compile(rf"^[{_SP}]*{_CODE_CORE}[{_SP}]*$")
_WO_ONLY = re.compile(rf"^[{_SP}]*{_WO_CORE}[{_SP}]*$")

_LEDGER_SEP = rf"[{_SP}{_MD}:=|\[\](){_DASH}>→]*"
_LEDGER = re.compile(
    r"(?<![0-9A-Za-z])ledger(?![0-9A-Za-z])"
    + _LEDGER_SEP
    + r"(?<![0-9A-Za-z])"
    + _CODE_CORE
    + _LEDGER_SEP
    + r"(?P<status>done|cancell?ed|to[ \t-]?do)(?![0-9A-Za-z])",
    re.IGNORECASE,
)
_STATUS = {"done": "DONE", "cancelled": "CANCELLED", "canceled": "CANCELLED"}

_ACTION = re.compile(rf"(?<![0-9A-Za-z])action(?![0-9A-Za-z])[{_SP}{_MD}:>]*(?=\{{)", re.IGNORECASE)
_JSON = json.JSONDecoder()


class _ActionPayload(msgspec.Struct):
    tool: str
    work_order: str


# --- refs --------------------------------------------------------------------------------


def normalize_code(text: str) -> str | None:
    """``'rc 1234'`` -> ``'RC-1234'``; None when *text* is not one completion code."""
    m = _CODE_ONLY.match(text)
    return f"RC-{m['code']}" if m else None


def normalize_work_order(text: str) -> str | None:
    """``'# w1234'`` -> ``'#W1234'``; None when *text* is not one work order."""
    m = _WO_ONLY.match(text)
    return f"#W{m['wo']}" if m else None


def _line_at(text: str, start: int, end: int) -> str:
    lo = text.rfind("\n", 0, start) + 1
    hi = text.find("\n", end)
    line = text[lo:] if hi < 0 else text[lo:hi]
    return line.removesuffix("\r")


def ref_matches(text: str) -> list[tuple[str, str, int, int]]:
    """(code, work order, start, end) of every ref in *text*: :func:`find_refs` without the
    ``Ref`` records and their lines (the rescoring hot path)."""
    if "ref" not in text.lower():
        return []
    out = []
    for m in _REF.finditer(text):  # group() and span(): two calls a match, not four (#50)
        code, wo = m.group("code", "wo")
        start, end = m.span()
        out.append(("RC-" + code, "#W" + wo, start, end))
    return out


def ref_matches_each(texts: Sequence[str]) -> dict[int, list[tuple[str, str, int, int]]]:
    """``{i: ref_matches(texts[i])}`` for every text that holds a ref (the others left out),
    read in one pass over the texts joined by newlines (the rescoring hot path reads an
    episode's replies at once, #50): :func:`ref_matches_joined`."""
    joined = "\n".join(texts)
    lowered = joined.lower()
    if len(lowered) != len(joined):  # a character lowered to several: offsets moved
        each = {i: ref_matches(t) for i, t in enumerate(texts)}
        return {i: refs for i, refs in each.items() if refs}
    return ref_matches_joined(joined, lowered, text_starts(texts))


def text_starts(texts: Sequence[str]) -> list[int]:
    """Each text's first offset in ``"\n".join(texts)``."""
    return list(map(add, accumulate(map(len, texts), initial=0), count()))


def ref_matches_joined(
    joined: str, lowered: str, starts: list[int]
) -> dict[int, list[tuple[str, str, int, int]]]:
    """:func:`ref_matches_each` of the texts whose newline join is *joined*, *lowered* its
    ``lower()`` of the same length (``lower`` then keeps every offset: no character lowers
    to nothing), *starts* their :func:`text_starts`. Exact: no ref spans a line break, and a
    newline is what the pattern's look-arounds read at a text's edge (neither is a letter
    or digit). A match starts at a keyword, ASCII ``r``, ``e``, ``f`` in any case, so the
    pattern is tried only where the lowered text reads ``ref``; in ASCII text, all in one
    search of the lowered text (``_REF_LOWER``, #50)."""
    out: dict[int, list[tuple[str, str, int, int]]] = {}
    if joined.isascii():
        for found in _REF_LOWER.finditer(lowered):
            start, end = found.span()
            i = bisect_right(starts, start) - 1
            base = starts[i]
            code, wo = found.group("code", "wo")
            out.setdefault(i, []).append(("RC-" + code, "#W" + wo, start - base, end - base))
        return out
    match, find = _REF.match, lowered.find
    at = find("ref")
    while at >= 0:
        m = match(joined, at)
        if m is None:
            at = find("ref", at + 1)
            continue
        start, end = m.span()
        i = bisect_right(starts, start) - 1
        base = starts[i]
        code, wo = m.group("code", "wo")
        out.setdefault(i, []).append(("RC-" + code, "#W" + wo, start - base, end - base))
        at = find("ref", end)
    return out


def find_refs(text: str) -> list[Ref]:
    """Every ``ref <code>/<work order>`` in *text*, in order (see the module docstring)."""
    return [
        Ref(code=code, work_order=wo, start=start, end=end, line=_line_at(text, start, end))
        for code, wo, start, end in ref_matches(text)
    ]


def _code_table(codes: Mapping[str, str]) -> dict[str, str]:
    table: dict[str, str] = {}
    for raw, step in codes.items():
        code = normalize_code(raw)
        if code is not None and code not in table:
            table[code] = step
    return table


_NO_RECEIPTS = Receipts(bookings=(), redisplays=(), unknown=())


def classify(refs: Sequence[Ref], codes: Mapping[str, str], work_order: str | None) -> Receipts:
    """Sort *refs* into bookings, re-displays and unknown codes (see the module docstring).

    *codes* maps completion code -> step id; *work_order* is the current turn's work order.
    """
    if not refs:
        return _NO_RECEIPTS
    table = _code_table(codes)
    current = normalize_work_order(work_order) if work_order is not None else None
    seen: set[tuple[str, str]] = set()
    bookings: list[Booking] = []
    redisplays: list[Ref] = []
    unknown: list[Ref] = []
    for ref in refs:
        key = (ref.code, ref.work_order)
        if key in seen:
            continue
        seen.add(key)
        if current is None or ref.work_order != current:
            redisplays.append(ref)
        elif ref.code in table:
            bookings.append(Booking(step=table[ref.code], code=ref.code, work_order=current))
        else:
            unknown.append(ref)
    return Receipts(bookings=tuple(bookings), redisplays=tuple(redisplays), unknown=tuple(unknown))


def read_bookings(text: str, codes: Mapping[str, str], work_order: str | None) -> Receipts:
    """``classify(find_refs(text), codes, work_order)``."""
    return classify(find_refs(text), codes, work_order)


# --- self-ledger -------------------------------------------------------------------------


def parse_ledger(text: str) -> dict[str, str]:
    """Completion code (``RC-dddd``) -> ``"DONE"`` | ``"CANCELLED"`` | ``"TODO"`` from
    ``LEDGER <code> <STATUS>`` lines (Section 3.3); the last entry for a code wins."""
    if "ledger" not in text.lower():
        return {}
    ledger: dict[str, str] = {}
    for m in _LEDGER.finditer(text):
        status = m["status"].lower()
        ledger[f"RC-{m['code']}"] = _STATUS.get(status, "TODO")
    return ledger


# --- tool actions ------------------------------------------------------------------------


# An ACTION's JSON payload is read from at most this many characters after its brace (and
# never past its line): a payload is two short strings, and the bound keeps find_actions
# linear in the reply however many ACTION words a hostile reply repeats (docs/security.md).
MAX_ACTION_CHARS = 4096


def _action_at(text: str, m: re.Match[str]) -> Action | None:
    brace = m.end()
    window = brace + MAX_ACTION_CHARS
    eol = text.find("\n", brace, window)
    line = text[brace : window if eol < 0 else eol]
    try:
        obj, end = _JSON.raw_decode(line)
        payload = msgspec.convert(obj, _ActionPayload)
    except (ValueError, RecursionError, msgspec.ValidationError):
        return None
    end += brace
    tool = payload.tool.strip()
    if not tool:
        return None
    raw_wo = payload.work_order.strip()
    wo = normalize_work_order(raw_wo) or raw_wo
    return Action(tool=tool, work_order=wo, start=m.start(), end=end)


def find_actions(text: str) -> list[Action]:
    """Every well-formed ``ACTION {"tool": ..., "work_order": ...}`` in *text*, in order."""
    if "action" not in text.lower():
        return []
    found = (_action_at(text, m) for m in _ACTION.finditer(text))
    return [a for a in found if a is not None]
