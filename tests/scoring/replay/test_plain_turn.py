"""The rescoring hot path's reading of the common turn (one reply, nothing refused, the ref
protocol) is the general rules' reading, field for field (#50)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import EpisodeSpec, TurnRecord, generate
from scoring.replay.bookings import CodeTables, every_turn, plain_turn

EPISODE = generate(EpisodeSpec(seed=7, steps=10, density=0.3))
TABLES = CodeTables(EPISODE)
REQUESTS = [t for t in EPISODE.turns if t.work_order is not None]
CODES = [s.code for s in EPISODE.steps]
WORK_ORDERS = sorted({t.work_order for t in REQUESTS if t.work_order is not None})

PROSE = [
    "Done.", "Booked it.", "Step s3 is already done", "no new booking needed", "for reference",
    "I cannot redo it", "I can\u2019t", "declined", "LEDGER s1 DONE", "ledger", "\n", "\n\n",
    "  ", "\t", "Anything else?", "It was cancelled", "unable to proceed", "REF", "İ",
    "\u00df", "\u2014", "\u00a0", "won\u2019t redo", "\ufb01ne", "K\u212a",
]  # fmt: skip


@st.composite
def replies(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            code = draw(st.sampled_from([*CODES, "RC-0000"]))
            wo = draw(st.sampled_from(WORK_ORDERS))
            parts.append(
                draw(st.sampled_from(["ref {c}/{w}", "Ref: {c} / {w}", "**ref** {c}/{w}"])).format(
                    c=code, w=wo
                )
            )
        else:
            parts.append(draw(st.sampled_from(PROSE)))
    return draw(st.sampled_from([" ", "\n", ""])).join(parts)


def _turn(reply: str, index: int) -> TurnRecord:
    t = REQUESTS[index]
    return TurnRecord(
        index=t.index, kind=t.kind, step=t.step, work_order=t.work_order, user_text=t.text,
        sent_text=t.text, arm_text="", reply=reply, admitted=(), refused=(), named=t.named,
        dynamic=t.dynamic,
    )  # fmt: skip


@given(replies(), st.integers(0, len(REQUESTS) - 1))
@settings(max_examples=300, deadline=None)
def test_plain_turn_is_the_general_reading(reply: str, index: int) -> None:
    turn = _turn(reply, index)
    assert plain_turn(turn.reply, TABLES, turn.work_order) == every_turn(turn, TABLES, False)


def test_plain_turn_reads_bookings_citations_and_stale_refs() -> None:
    t = REQUESTS[0]
    code = next(s.code for s in EPISODE.steps if s.id == t.step)
    stale = next(w for w in WORK_ORDERS if w != t.work_order)
    for reply in (
        f"Done.\nref {code}/{t.work_order}",
        f"Step {t.step} is already done.\nref {code}/{t.work_order}",
        f"Shown again: ref {code}/{stale}",
        "Nothing booked.",
    ):
        turn = _turn(reply, 0)
        got = plain_turn(reply, TABLES, t.work_order)
        assert got == every_turn(turn, TABLES, False)
    booked = plain_turn(f"Done.\nref {code}/{t.work_order}", TABLES, t.work_order)
    assert booked.primary == booked.decline_aware == (t.step,) and not booked.citations
    cited = plain_turn(
        f"Step {t.step} is already done.\nref {code}/{t.work_order}", TABLES, t.work_order
    )
    assert cited.primary == (t.step,) and cited.decline_aware == () and cited.citations == 1
    assert plain_turn(f"ref {code}/{stale}", TABLES, t.work_order).redisplays == 1
