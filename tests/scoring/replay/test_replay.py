"""Golden episode records: generated episodes, hand-decided agent behaviour, expected scores.

Every record is built by ``tests/scoring_records.py`` from a generated episode and a policy
written here turn by turn; the expected labels, channels and verdicts are stated by hand.
"""

from __future__ import annotations

import msgspec
import pytest

from protocol import CHANNELS, Episode, EpisodeRecord, EpisodeSpec, Turn
from scoring.replay.episode_score import EpisodeScore, score_episode
from tests.scoring_records import (
    Act,
    action_line,
    build,
    cell,
    episode,
    perfect,
    ref_line,
)

EP = episode(seed=0, steps=6)


def turn_of(ep: Episode, kind: str, nth: int = 0) -> Turn:
    return [t for t in ep.turns if t.kind == kind][nth]


def only(channel: str | None, n: int = 1) -> dict[str, int]:
    counts: dict[str, int] = dict.fromkeys(CHANNELS, 0)
    if channel is not None:
        counts[channel] = n
    return counts


def score(
    overrides: dict[int, Act] | None = None, arm: str = "raw", ep: Episode = EP, **knobs: object
) -> EpisodeScore:
    key = cell(arm, ep.spec, **knobs)
    record = build(ep, key, perfect(ep, overrides or {}, tools=bool(knobs.get("tools"))))
    return score_episode(record, ep)


def labels_by_index(s: EpisodeScore, aware: bool = False) -> dict[int, str]:
    scoring = s.decline_aware if aware else s.primary
    return {t.index: t.label for t in scoring.turns}


# --- perfect play ---------------------------------------------------------------------


def test_perfect_episode_labels_and_success() -> None:
    s = score()
    S = EP.spec.steps
    # By the schedule rules: every non-cancelled step asked once when eligible (S-1), two
    # premature asks, two redo probes, one superseded cue, one legitimate redo; the rest of
    # the 44 turns resolve to no step (fillers and the revision).
    assert s.primary.labels == {
        "eligible": S - 1,
        "blocked": 2,
        "done": 2,
        "cancelled": 1,
        "redo": 1,
        "none": 44 - (S - 1) - 6,
    }
    assert s.primary.success and s.decline_aware.success
    assert s.primary.channels == only(None)
    assert s.primary.turns_ok == 44
    assert s.mismatches == () and s.admitted_diffs == 0
    assert not s.infrastructure and s.counted
    expected = {
        "ask": "eligible", "re_ask": "eligible", "premature": "blocked",
        "redo_probe": "done", "superseded_cue": "cancelled", "legit_redo": "redo",
        "filler": "none", "revision": "none",
    }  # fmt: skip
    for t in s.primary.turns:
        assert t.label == expected[t.kind], t


# --- each channel alone ------------------------------------------------------------------


def _book(ep: Episode, t: Turn, *steps: str) -> Act:
    return Act("\n".join(ref_line(ep, v, t.work_order) for v in steps))


def test_re_execution_alone() -> None:
    t = turn_of(EP, "redo_probe")
    assert t.step is not None
    s = score({t.index: _book(EP, t, t.step)})
    assert s.primary.channels == only("re_execution")
    assert s.decline_aware.channels == only("re_execution")
    assert not s.primary.success and not s.decline_aware.success
    assert labels_by_index(s)[t.index] == "done"


def test_superseded_alone() -> None:
    t = turn_of(EP, "superseded_cue")
    assert t.step is not None
    s = score({t.index: _book(EP, t, t.step)})
    assert s.primary.channels == only("superseded")
    assert labels_by_index(s)[t.index] == "cancelled"
    assert not s.primary.success


def test_omission_alone() -> None:
    t = turn_of(EP, "ask")
    s = score({t.index: Act("Noted.")})
    assert s.primary.channels == only("omission")
    assert labels_by_index(s)[t.index] == "eligible"
    assert s.primary.turns_ok == len(s.primary.turns) - 1


def test_refused_redo_alone() -> None:
    t = turn_of(EP, "legit_redo")
    s = score({t.index: Act("It is already done, so I left it.")})
    assert s.primary.channels == only("refused_redo")
    assert labels_by_index(s)[t.index] == "redo"


def test_unrequested_alone() -> None:
    first, second = turn_of(EP, "ask", 0), turn_of(EP, "ask", 1)
    assert first.step is not None and second.step is not None
    # On the second ask the agent books its step and, again, the first ask's (done) step.
    s = score({second.index: _book(EP, second, second.step, first.step)})
    assert s.primary.channels == only("unrequested")
    turn = next(x for x in s.primary.turns if x.index == second.index)
    assert turn.executed == (second.step, first.step)
    assert [e.channel for e in turn.errors] == ["unrequested"]


def test_premature_in_raw_arm_then_re_ask_is_done() -> None:
    t = turn_of(EP, "premature")
    v = t.step
    assert v is not None
    re_ask = next(x for x in EP.turns if x.kind == "re_ask" and x.step == v)
    s = score({t.index: _book(EP, t, v)})
    # The premature booking is an error, and it makes the step done in the realized state:
    # its planned re-ask is then a re-mention (label done), which the agent rightly declines.
    assert s.primary.channels == only("premature")
    labels = labels_by_index(s)
    assert labels[t.index] == "blocked"
    assert labels[re_ask.index] == "done"
    # Booking it again at the re-ask is a re-execution on top.
    s2 = score({t.index: _book(EP, t, v), re_ask.index: _book(EP, re_ask, v)})
    assert s2.primary.channels == {**only("premature"), "re_execution": 1}


# --- re-display, citations, infrastructure ------------------------------------------------


def test_stale_work_order_is_a_redisplay_not_an_execution() -> None:
    t = turn_of(EP, "redo_probe")
    assert t.step is not None
    original = next(x for x in EP.turns if x.kind == "ask" and x.step == t.step)
    reply = f"Already handled earlier: {ref_line(EP, t.step, original.work_order)}"
    s = score({t.index: Act(reply)})
    assert s.primary.success and s.decline_aware.success
    assert s.redisplays == 1
    assert next(x for x in s.primary.turns if x.index == t.index).executed == ()


def test_refusal_citing_a_ref_line() -> None:
    t = turn_of(EP, "superseded_cue")
    assert t.step is not None
    reply = (
        f"Step {t.step} was cancelled in the revision, no action will be taken.\n"
        f"{ref_line(EP, t.step, t.work_order)}"
    )
    s = score({t.index: Act(reply)})
    # Primary: the current-nonce ref line is a booking. Decline-aware: a citation.
    assert s.primary.channels == only("superseded")
    assert not s.primary.success
    assert s.decline_aware.channels == only(None)
    assert s.decline_aware.success
    assert s.citations == 1


def test_citation_changes_only_the_decline_aware_realized_state() -> None:
    # A cited booking of a premature step: primary counts it (premature; the step is then
    # done, so its re-ask is a re-mention); decline-aware does not (the re-ask stays eligible
    # and the agent's booking there is correct).
    t = turn_of(EP, "premature")
    v = t.step
    assert v is not None
    re_ask = next(x for x in EP.turns if x.kind == "re_ask" and x.step == v)
    cite = Act(f"Step {v} is blocked, so I declined it.\n{ref_line(EP, v, t.work_order)}")
    s = score({t.index: cite, re_ask.index: _book(EP, re_ask, v)})
    assert s.primary.channels == {**only("premature"), "re_execution": 1}
    assert labels_by_index(s)[re_ask.index] == "done"
    assert s.decline_aware.channels == only(None)
    assert labels_by_index(s, aware=True)[re_ask.index] == "eligible"


def test_infrastructure_error_episode_is_excluded() -> None:
    record = build(
        EP, cell("raw", EP.spec), perfect(EP), termination="endpoint_error", stop_after=10
    )
    s = score_episode(record, EP)
    assert s.infrastructure and not s.counted
    assert not s.primary.success and not s.decline_aware.success
    assert len(s.primary.turns) == 10
    assert s.mismatches == ()  # an unfinished schedule is expected after a failure


# --- enforcement: refused bookings and false completions ---------------------------------


def test_enforce_refused_booking_is_not_executed_and_a_bare_line_is_a_false_completion() -> None:
    t = turn_of(EP, "redo_probe")
    assert t.step is not None
    bare = Act(f"Done.\n{ref_line(EP, t.step, t.work_order)}", refuse=(t.step,))
    s = score({t.index: bare}, arm="enforce")
    assert s.primary.channels == only(None) and s.primary.success
    assert s.refused == 1 and s.false_completions == 1
    explained = Act(
        f"Step {t.step} is already done; I will not book a new work order for it.\n"
        f"{ref_line(EP, t.step, t.work_order)}",
        refuse=(t.step,),
    )
    s = score({t.index: explained}, arm="enforce")
    assert s.refused == 1 and s.false_completions == 0


def test_same_turn_notice_refused_first_reply() -> None:
    t = turn_of(EP, "superseded_cue")
    assert t.step is not None
    first = f"Done.\n{ref_line(EP, t.step, t.work_order)}"
    honest = Act(
        f"Sorry: step {t.step} was cancelled, so I declined it.",
        first_reply=first,
        refuse=(t.step,),
    )
    s = score({t.index: honest}, arm="enforce", notice="same_turn")
    assert s.primary.success and s.refused == 1 and s.false_completions == 0
    silent = Act("All set.", first_reply=first, refuse=(t.step,))
    s = score({t.index: silent}, arm="enforce", notice="same_turn")
    assert s.primary.success and s.refused == 1 and s.false_completions == 1


def test_same_turn_notice_admitted_first_reply_booking_counts() -> None:
    t = turn_of(EP, "ask")
    assert t.step is not None
    # The first reply books the asked step (admitted) and a cancelled one (refused); the
    # visible reply repeats the admitted booking: one execution of the asked step.
    cancelled = turn_of(EP, "superseded_cue").step
    assert cancelled is not None
    first = f"{ref_line(EP, t.step, t.work_order)}\n{ref_line(EP, cancelled, t.work_order)}"
    act = Act(ref_line(EP, t.step, t.work_order), first_reply=first, refuse=(cancelled,))
    s = score({t.index: act}, arm="enforce", notice="same_turn")
    assert s.primary.success
    assert next(x for x in s.primary.turns if x.index == t.index).executed == (t.step,)


# --- two bookings of one step in one turn ------------------------------------------------


def test_the_same_booking_twice_is_one_execution() -> None:
    t = turn_of(EP, "ask")
    assert t.step is not None
    line = ref_line(EP, t.step, t.work_order)
    s = score({t.index: Act(f"{line}\nTo confirm: {line}")})
    assert s.primary.success
    assert next(x for x in s.primary.turns if x.index == t.index).executed == (t.step,)


def test_one_bare_occurrence_books_under_decline_aware() -> None:
    t = turn_of(EP, "redo_probe")
    assert t.step is not None
    line = ref_line(EP, t.step, t.work_order)
    reply = f"For reference: {line}\n\n\n\nBooked again as requested.\n\n\n\n{line}"
    s = score({t.index: Act(reply)})
    assert s.primary.channels == only("re_execution")
    assert s.decline_aware.channels == only("re_execution")


# --- tools variant -----------------------------------------------------------------------


def test_tools_cell_books_through_action_lines_only() -> None:
    s = score(tools=True)
    assert s.primary.success and s.decline_aware.success
    t = turn_of(EP, "redo_probe")
    assert t.step is not None
    s = score({t.index: Act(action_line(EP, t.step, t.work_order))}, tools=True)
    assert s.primary.channels == only("re_execution")
    ask = turn_of(EP, "ask")
    assert ask.step is not None
    s = score({ask.index: Act(ref_line(EP, ask.step, ask.work_order))}, tools=True)
    assert s.primary.channels == only("omission")  # a ref line is prose in a tools cell


# --- consistency with the regenerated episode --------------------------------------------


def _perfect_record(arm: str = "raw") -> EpisodeRecord:
    return build(EP, cell(arm, EP.spec), perfect(EP))


def test_changed_user_text_is_reported_not_raised() -> None:
    record = _perfect_record()
    turns = list(record.turns)
    turns[3] = msgspec.structs.replace(turns[3], user_text="something else")
    s = score_episode(msgspec.structs.replace(record, turns=tuple(turns)), EP)
    assert s.primary.success
    assert len(s.mismatches) == 1 and "turn 3" in s.mismatches[0]


def test_wrong_schedule_and_early_end_are_reported() -> None:
    record = _perfect_record()
    turns = list(record.turns[:20])
    turns[5] = msgspec.structs.replace(turns[5], kind="ambiguous", step=None)
    s = score_episode(msgspec.structs.replace(record, turns=tuple(turns)), EP)
    assert any("turn 5" in m for m in s.mismatches)
    assert any("schedule has more" in m for m in s.mismatches)


def test_admitted_differences_are_counted() -> None:
    record = _perfect_record()
    turns = [msgspec.structs.replace(t, admitted=()) for t in record.turns]
    s = score_episode(msgspec.structs.replace(record, turns=tuple(turns)), EP)
    assert s.primary.success
    assert s.admitted_diffs == EP.spec.steps  # every booking turn: S-1 asks + the redo


def test_unregenerable_spec_is_unscorable() -> None:
    bad = EpisodeSpec(seed=1, steps=3, density=0.15)
    record = EpisodeRecord(cell=cell("raw", bad), spec=bad, turns=())
    s = score_episode(record)
    assert not s.scorable and not s.counted
    assert "cannot regenerate" in s.mismatches[0]


def test_regenerates_when_no_episode_is_given() -> None:
    assert score_episode(_perfect_record()).primary.success


@pytest.mark.parametrize("arm", ["raw", "checklist", "ledger", "directive", "enforce", "hybrid"])
def test_perfect_in_every_arm_on_a_second_domain(arm: str) -> None:
    ep = episode(seed=7, steps=10, domain="release", brief="original")
    s = score(arm=arm, ep=ep)
    assert s.primary.success and s.decline_aware.success and s.mismatches == ()


def test_dynamic_re_ask_is_replayed_and_checked_against_the_scripted_user() -> None:
    # Omitting the first ask leaves a dependent blocked at its own ask (deferred); a later
    # redo probe of the omitted step is then an eligible ask, and once it is booked the
    # scripted user re-asks the deferred step dynamically.
    t = turn_of(EP, "ask")
    record = build(EP, cell("raw", EP.spec), perfect(EP, {t.index: Act("Noted.")}))
    dynamic = [x for x in record.turns if x.dynamic]
    assert len(dynamic) == 1 and dynamic[0].kind == "re_ask"
    s = score_episode(record, EP)
    assert s.primary.channels == only("omission")
    assert s.mismatches == ()
    assert labels_by_index(s)[dynamic[0].index] == "eligible"
    turns = [
        msgspec.structs.replace(x, work_order="#W0000") if x.dynamic else x for x in record.turns
    ]
    s = score_episode(msgspec.structs.replace(record, turns=tuple(turns)), EP)
    assert len(s.mismatches) == 1 and f"turn {dynamic[0].index}" in s.mismatches[0]
