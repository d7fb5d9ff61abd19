"""What one logged turn executed, under the primary and the decline-aware scoring.

Decisions (the replay module's docstring lists them all; these are the ones made here):

* Executions are re-parsed from the text, never taken from the log's ``admitted`` list, so a
  changed parser or rule rescores old logs. Only the visible reply and, under the same-turn
  notice, ``first_reply`` (the reply the gate refused and re-prompted) can book; reasoning
  text never books.
* A booking is a ref line with the current work order and a known completion code
  (``classify(find_refs(text))`` of :mod:`protocol.state.receipts`, i.e.
  :func:`protocol.state.bookings.read_execution`, keeping each ref's span for the citation check). A stale work order is a re-display; an unknown code
  under the current work order is a booking attempt that executes nothing.
* Cells with ``knobs.tools`` book through ``ACTION`` lines only
  (:func:`protocol.state.bookings.read_execution`, the reading the arms use): a known tool name
  with the current work order executes that tool's step; ref lines in those cells are prose.
  The same (tool, work order) twice is one action. (Re-displays and unknown tools are not
  counted for tool cells.)
* A booking the record lists in ``refused`` (matched on (code, work order)) is not an
  execution under either scoring: the gate kept it out of the world.
* Two bookings of one step in one turn are one execution: the same (code, work order) twice
  in a reply is one booking (protocol.state.receipts); the same booking in ``first_reply`` and in
  the visible reply is one; different codes are different steps.
* Decline-aware: a booking is a citation, not an execution, when every occurrence of its
  (code, work order) ref in that reply is a citation by :func:`scoring.replay.declines.is_citation`
  (one bare occurrence books). ``ACTION`` lines are acts, never citations.
* A refused booking is a *false completion* when its visible reply carries no refusal
  language: if the visible reply holds the booking's line, when some occurrence of it is not a
  citation; if it does not (the same-turn notice rewrote the reply), when the visible reply
  has no decline annotation or refusal phrasing anywhere.
"""

from __future__ import annotations

import functools
import re

import msgspec

from protocol.records import Booking, Episode, TurnRecord
from protocol.state.bookings import code_table, read_execution
from protocol.state.receipts import normalize_work_order, ref_matches
from scoring.replay.citations import ReplyDeclines, cannot_decline, has_refusal_language

__all__ = [
    "NOTHING",
    "CodeTables",
    "TurnBookings",
    "every_turn",
    "plain_refs",
    "plain_turn",
    "read_turn",
]


class CodeTables:
    """An episode's completion-code table, built once per episode."""

    __slots__ = ("codes", "episode")

    def __init__(self, episode: Episode) -> None:
        self.episode = episode
        self.codes: dict[str, str] = code_table(episode)


# gc=False here: frozen, every field immutable, never in a reference cycle (#50, eleventh round)
class TurnBookings(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    # distinct steps executed, first appearance first; on the tool harness a step written
    # again in the turn after a landed timeout follows once per extra write (a duplicate)
    primary: tuple[str, ...]
    decline_aware: tuple[str, ...]
    booked: frozenset[tuple[str, str]]  # (code, work order) executed under primary
    citations: int  # primary executions that decline-aware reads as citations
    redisplays: int
    unknown: int
    refused: int
    false_completions: int


# A booking with the spans of its occurrences in one text.
_Found = list[tuple[Booking, list[tuple[int, int]]]]


@functools.lru_cache(maxsize=4096)
def _current(work_order: str | None) -> str | None:
    """The turn's work order as :func:`protocol.state.receipts.classify` normalizes it."""
    return normalize_work_order(work_order) if work_order is not None else None


def _ref_bookings(text: str, tables: CodeTables, work_order: str | None) -> tuple[_Found, int, int]:
    """``classify(find_refs(text), codes, work_order)``, each booking with its spans, read in
    one pass over :func:`protocol.state.receipts.ref_matches` (the refs' codes are normalized, so
    ``code in tables.codes`` is ``classify``'s table lookup)."""
    refs = ref_matches(text)
    if not refs:
        return [], 0, 0
    return _classified(refs, tables, work_order)


def _classified(
    refs: list[tuple[str, str, int, int]], tables: CodeTables, work_order: str | None
) -> tuple[_Found, int, int]:
    """:func:`_ref_bookings` of a text whose :func:`protocol.state.receipts.ref_matches` are
    *refs* (at least one)."""
    current = _current(work_order)
    codes = tables.codes
    spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
    found: _Found = []
    redisplays = unknown = 0
    for code, wo, start, end in refs:
        key = (code, wo)
        seen = spans.get(key)
        if seen is not None:
            seen.append((start, end))
            continue
        spans[key] = here = [(start, end)]
        if current is None or wo != current:
            redisplays += 1
        elif code in codes:
            found.append((Booking(step=codes[code], code=code, work_order=current), here))
        else:
            unknown += 1
    return found, redisplays, unknown


def _action_bookings(text: str, tables: CodeTables, work_order: str | None) -> _Found:
    receipts = read_execution(text, tables.episode, work_order, tools=True)
    return [(b, []) for b in receipts.bookings]


def _parse(
    text: str, tables: CodeTables, work_order: str | None, tools: bool
) -> tuple[_Found, int, int]:
    if tools:
        return _action_bookings(text, tables, work_order), 0, 0
    return _ref_bookings(text, tables, work_order)


def _false_completion(booking: Booking, found: _Found, reply: str, tools: bool) -> bool:
    for b, spans in found:
        if b.code == booking.code and b.work_order == booking.work_order:
            if tools:
                return True  # an ACTION line reads as the act itself
            declines = ReplyDeclines(reply)
            return not all(declines.is_citation(s, e) for s, e in spans)
    return not has_refusal_language(reply)


# The keywords every ref (ACTION) line holds: a reply without them books nothing.
_REF_WORD = re.compile("ref", re.IGNORECASE)
_ACTION_WORD = re.compile("action", re.IGNORECASE)

NOTHING = TurnBookings(
    primary=(),
    decline_aware=(),
    booked=frozenset(),
    citations=0,
    redisplays=0,
    unknown=0,
    refused=0,
    false_completions=0,
)


def plain_turn(reply: str, tables: CodeTables, work_order: str | None) -> TurnBookings:
    """:func:`read_turn` of a ref-protocol turn with one reply and nothing refused, the
    common turn (#50): the reply lowered once for the keyword and the decline pre-checks;
    :class:`ReplyDeclines` only where a decline can be."""
    lowered = reply.lower()
    if "ref" not in lowered:
        return NOTHING  # no ref line can be in this reply
    refs = ref_matches(reply)
    return plain_refs(reply, refs, tables, work_order, lowered) if refs else NOTHING


def plain_refs(
    reply: str,
    refs: list[tuple[str, str, int, int]],
    tables: CodeTables,
    work_order: str | None,
    lowered: str | None = None,
    quiet: bool | None = None,
) -> TurnBookings:
    """:func:`plain_turn` of a reply whose :func:`protocol.state.receipts.ref_matches` are
    *refs* (found in bulk, :func:`protocol.state.receipts.ref_matches_each`); *lowered*:
    ``reply.lower()`` when the caller has it; *quiet*: ``cannot_decline(reply, lowered)``
    when the caller has it (:func:`scoring.replay.citations.cannot_decline_each`)."""
    if len(refs) == 1:
        return _one_ref(reply, refs[0], tables, work_order, lowered, quiet)
    found, redisplays, unknown = _classified(refs, tables, work_order)
    primary: dict[str, None] = {}
    aware: dict[str, None] = {}
    booked: set[tuple[str, str]] = set()
    declines = None
    if found and not (quiet if quiet is not None else _quiet(reply, lowered)):
        declines = ReplyDeclines(reply)
    for booking, spans in found:
        step = booking.step
        if step is None:
            continue
        booked.add((booking.code, booking.work_order))
        primary[step] = None
        if declines is None or not all(declines.is_citation(s, e) for s, e in spans):
            aware[step] = None
    return TurnBookings(
        primary=tuple(primary),
        decline_aware=tuple(aware),
        booked=frozenset(booked),
        citations=len(primary) - len(aware),
        redisplays=redisplays,
        unknown=unknown,
        refused=0,
        false_completions=0,
    )


def _quiet(reply: str, lowered: str | None) -> bool:
    """:func:`cannot_decline` of *reply* (*lowered*: its ``lower()``, or None)."""
    return cannot_decline(reply, reply.lower() if lowered is None else lowered)


_REDISPLAY = msgspec.structs.replace(NOTHING, redisplays=1)
_UNKNOWN = msgspec.structs.replace(NOTHING, unknown=1)


def _one_ref(
    reply: str,
    ref: tuple[str, str, int, int],
    tables: CodeTables,
    work_order: str | None,
    lowered: str | None,
    quiet: bool | None = None,
) -> TurnBookings:
    """:func:`plain_refs` of a reply with one ref (the common booked turn), its reading
    without the general case's tables."""
    code, wo, start, end = ref
    current = _current(work_order)
    if current is None or wo != current:
        return _REDISPLAY
    step = tables.codes.get(code)
    if step is None:
        return _UNKNOWN
    cited = not (quiet if quiet is not None else _quiet(reply, lowered)) and (
        ReplyDeclines(reply).is_citation(start, end)
    )
    return TurnBookings(
        primary=(step,),
        decline_aware=() if cited else (step,),
        booked=frozenset(((code, current),)),
        citations=1 if cited else 0,
        redisplays=0,
        unknown=0,
        refused=0,
        false_completions=0,
    )


def read_turn(turn: TurnRecord, tables: CodeTables, tools: bool) -> TurnBookings:
    """The executions of one logged turn under both scorings (see the module docstring)."""
    if not tools and not turn.refused and turn.first_reply is None:
        return plain_turn(turn.reply, tables, turn.work_order)
    return every_turn(turn, tables, tools)


def every_turn(turn: TurnRecord, tables: CodeTables, tools: bool) -> TurnBookings:
    """:func:`read_turn` by the general rules, for any turn (``plain_turn`` answers the
    same for the turns it reads: tests/scoring/replay/test_plain_turn.py)."""
    if not turn.refused and turn.first_reply is None:
        keyword = _ACTION_WORD if tools else _REF_WORD
        if keyword.search(turn.reply) is None:
            return NOTHING  # no ref (or ACTION) line can be in this reply
    refused = {(b.code, b.work_order): b for b in turn.refused}
    texts = [turn.reply] if turn.first_reply is None else [turn.first_reply, turn.reply]
    primary: dict[str, None] = {}
    aware: dict[str, None] = {}
    booked: set[tuple[str, str]] = set()
    redisplays = unknown = 0
    found: _Found = []
    for text in texts:  # the visible reply comes last: ``found`` ends as its bookings
        found, stale, unknown_here = _parse(text, tables, turn.work_order, tools)
        redisplays += stale
        unknown += unknown_here
        declines: ReplyDeclines | None = None
        for booking, spans in found:
            key = (booking.code, booking.work_order)
            if key in refused or booking.step is None:
                continue
            booked.add(key)
            primary[booking.step] = None
            if not tools:
                declines = declines or ReplyDeclines(text)
                if all(declines.is_citation(s, e) for s, e in spans):
                    continue
            aware[booking.step] = None
    false = sum(_false_completion(b, found, turn.reply, tools) for b in refused.values())
    return TurnBookings(
        primary=tuple(primary),
        decline_aware=tuple(aware),
        booked=frozenset(booked),
        citations=len(primary) - len(aware),
        redisplays=redisplays,
        unknown=unknown,
        refused=len(refused),
        false_completions=false,
    )
