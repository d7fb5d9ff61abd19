"""The rescoring hot path's bulk readings (#50) answer what the per-turn rules answer: an
episode's replies read at once (``turn_reads._ref_turns``) against ``read_turn`` of each turn,
the self-ledger mask from the lowered reply against the rule it implements, and the cut
replies counted in comprehensions against a plain tally. Non-ASCII text included (``İ``
lowers to two characters, the Kelvin sign to an ASCII ``k``)."""

from __future__ import annotations

import re

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import EpisodeSpec, TurnRecord, generate
from protocol.records import Booking, CallRecord, CellKey, EpisodeRecord
from scoring.replay.bookings import NOTHING, CodeTables, read_turn
from scoring.replay.cuts import CUT_ROLES, record_cuts
from scoring.replay.declines import mask_ledger
from scoring.replay.turn_reads import _ref_turns, admitted_diffs, read_turns

EPISODE = generate(EpisodeSpec(seed=11, steps=8, density=0.3))
TABLES = CodeTables(EPISODE)
REQUESTS = [t for t in EPISODE.turns if t.work_order is not None]
CODES = [s.code for s in EPISODE.steps]
WORK_ORDERS = sorted({t.work_order for t in REQUESTS if t.work_order is not None})

PROSE = [
    "Done.", "Booked it.", "Step s3 is already done", "no new booking needed", "for reference",
    "I cannot redo it", "I can\u2019t", "declined", "LEDGER s1 DONE", "ledger", "\n", "\n\n",
    "  ", "\t", "Anything else?", "It was cancelled", "unable to proceed", "REF", "\u0130",
    "\u0131", "\u00df", "\u2014", "\u00a0", "won\u2019t redo", "\ufb01ne", "K\u212a", "xref",
    "ref", "R", "LEDGER RC-1234 DONE", "Ledger:", "\u0130ledger", "LEDGERS", "_ledger",
    "\r", "ledger \u00df", "\nLEDGER s2 TODO\n", "x LeDgEr", "ledger1",
]  # fmt: skip


@st.composite
def replies(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            code = draw(st.sampled_from([*CODES, "RC-0000"]))
            wo = draw(st.sampled_from(WORK_ORDERS))
            form = draw(st.sampled_from(["ref {c}/{w}", "Ref: {c} / {w}", "**ref** {c}/{w}"]))
            parts.append(form.format(c=code, w=wo))
        else:
            parts.append(draw(st.sampled_from(PROSE) | st.text(max_size=4)))
    return draw(st.sampled_from([" ", "\n", ""])).join(parts)


@st.composite
def turns(draw: st.DrawFn) -> tuple[TurnRecord, ...]:
    out = []
    for _ in range(draw(st.integers(0, 6))):
        t = REQUESTS[draw(st.integers(0, len(REQUESTS) - 1))]
        refused: tuple[Booking, ...] = ()
        if draw(st.integers(0, 4)) == 0 and t.step is not None and t.work_order is not None:
            code = EPISODE.step(t.step).code
            refused = (Booking(step=t.step, code=code, work_order=t.work_order),)
        first = draw(st.none() | replies()) if draw(st.integers(0, 4)) == 0 else None
        out.append(
            TurnRecord(
                index=t.index,
                kind=t.kind,
                step=t.step,
                work_order=t.work_order,
                user_text=t.text,
                sent_text=t.text,
                arm_text="",
                reply=draw(replies()),
                first_reply=first,
                admitted=(),
                refused=refused,
                named=t.named,
                dynamic=t.dynamic,
            )
        )
    return tuple(out)


@given(turns())
@settings(max_examples=300, deadline=None)
def test_an_episodes_replies_read_at_once_are_each_turns_reading(
    logged: tuple[TurnRecord, ...],
) -> None:
    expected = [read_turn(t, TABLES, False) for t in logged]
    assert _ref_turns(logged, TABLES) == expected
    record = EpisodeRecord(
        cell=CellKey(model="m", steps=8, density=0.3, arm="raw"), spec=EPISODE.spec, turns=logged
    )
    assert read_turns(record, EPISODE) == expected


_RULE = re.compile(r"(?i)\bLEDGER\b")


def _masked_by_the_rule(reply: str) -> str:
    return "\n".join(" " * len(x) if _RULE.search(x) else x for x in reply.split("\n"))


@given(st.lists(st.sampled_from(PROSE) | st.text(max_size=6), max_size=12))
@settings(max_examples=1000, deadline=None)
def test_the_ledger_mask_is_its_rule(parts: list[str]) -> None:
    reply = "".join(parts)
    assert mask_ledger(reply) == _masked_by_the_rule(reply)
    assert mask_ledger(reply, reply.lower()) == _masked_by_the_rule(reply)


ROLES = ["agent", "matcher", "compiler", "memory", "embedding"]
CALLS = st.builds(
    CallRecord,
    role=st.sampled_from(ROLES),
    finish_reason=st.sampled_from([None, "stop", "length"]),
    cached=st.booleans(),
)


def _tally(calls: list[list[CallRecord]]) -> dict[str, tuple[int, int]]:
    tally = {role: [0, 0] for role in CUT_ROLES}
    for turn in calls:
        for c in turn:
            if c.cached or c.role not in tally:
                continue
            tally[c.role][1] += 1
            tally[c.role][0] += c.finish_reason == "length"
    return {role: (v[0], v[1]) for role, v in tally.items() if v[1]}


@given(st.lists(st.lists(CALLS, max_size=4), max_size=6))
@settings(max_examples=1000, deadline=None)
def test_cut_replies_are_the_plain_tally(calls: list[list[CallRecord]]) -> None:
    t = REQUESTS[0]
    logged = tuple(
        TurnRecord(
            index=t.index,
            kind=t.kind,
            step=t.step,
            work_order=t.work_order,
            user_text=t.text,
            sent_text=t.text,
            arm_text="",
            reply="",
            calls=tuple(c),
            named=t.named,
            dynamic=t.dynamic,
        )
        for c in calls
    )
    record = EpisodeRecord(
        cell=CellKey(model="m", steps=8, density=0.3, arm="raw"), spec=EPISODE.spec, turns=logged
    )
    got = record_cuts(record)
    assert got == _tally(calls) and list(got) == list(_tally(calls))


BOOKINGS = st.builds(
    Booking,
    step=st.sampled_from(["s1", "s2"]),
    code=st.sampled_from(["RC-1111", "RC-2222"]),
    work_order=st.sampled_from(["#W1111", "#W2222"]),
)


@given(st.lists(st.tuples(st.lists(BOOKINGS, max_size=3), st.lists(BOOKINGS, max_size=3))))
@settings(max_examples=1000, deadline=None)
def test_admitted_diffs_compares_each_turns_sets(
    pairs: list[tuple[list[Booking], list[Booking]]],
) -> None:
    t = REQUESTS[0]
    read = [
        msgspec.structs.replace(NOTHING, booked=frozenset((b.code, b.work_order) for b in booked))
        for booked, _ in pairs
    ]
    logged = [
        TurnRecord(
            index=t.index,
            kind=t.kind,
            step=t.step,
            work_order=t.work_order,
            user_text=t.text,
            sent_text=t.text,
            arm_text="",
            reply="",
            admitted=tuple(admitted),
            named=t.named,
            dynamic=t.dynamic,
        )
        for _, admitted in pairs
    ]
    expected = sum(
        r.booked != frozenset((b.code, b.work_order) for b in x.admitted)
        for r, x in zip(read, logged, strict=True)
    )
    assert admitted_diffs(read, logged) == expected
