"""The scripted user's answers to the gate (issue #38; protocol.arms.askback): wordings pinned,
labels by the rules of docs/protocol.md, deterministic, and never a move of state."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import EpisodeSpec, generate, strings
from protocol.arms.askback import (
    Principal,
    answered_step,
    ask_reason,
    clarification,
    confirms,
    question,
    render_escalation,
    render_show,
)
from protocol.episode.ambiguous import meant_step
from protocol.records import Booking, Episode, Turn
from protocol.state.machine import TaskState, Verdict
from protocol.user import ScriptedUser

EP = generate(EpisodeSpec(seed=101, steps=10, density=0.3, ambiguous_rate=0.15))


def test_the_wordings_are_pinned() -> None:
    assert strings.SHOW_STEP == "[GATE READING] I read this as: {id}, {text}."
    assert strings.SHOW_NONE == "[GATE READING] I read this as: no step of the plan."
    assert strings.ASK_WHICH == "Which step of the plan does this message ask for, if any?"
    assert strings.ASK_EITHER == "Do you mean '{a}' or '{b}', or another step of the plan?"
    assert strings.USER_CLARIFY_STEP == "I mean the step '{text}' ({wo})."
    assert strings.USER_CLARIFY_REDO == (
        "I mean the step '{text}', and yes, I authorize doing it again ({wo})."
    )
    assert strings.USER_CLARIFY_NONE == "None of those: this message asks for no step of the plan."
    assert strings.USER_CLARIFY_BOTH == "Both steps: '{a}' and '{b}' ({wo})."
    assert strings.USER_CONFIRM == "Yes, I ordered that: let it through."
    assert strings.USER_REFUSE == "No, keep it refused."
    assert strings.ESCALATION.startswith("[GATE ESCALATION] I refused the booking 'ref ")


def test_a_question_is_answered_with_the_intended_steps_wording() -> None:
    seen = set()
    for turn in EP.turns:
        c = clarification(EP, turn)
        assert c == clarification(EP, turn)  # deterministic
        seen.add(turn.kind)
        if turn.kind == "ambiguous":  # the step the user meant, of the two named (#46)
            assert (c.text, c.label) == (strings.USER_CLARIFY_NONE, "none")  # none wanted
            for meant in turn.named:
                m = clarification(EP, turn, meant)
                wo = turn.work_order
                assert m.label == "meant"
                assert m.text == strings.USER_CLARIFY_STEP.format(text=EP.step(meant).text, wo=wo)
                assert answered_step(EP, turn, m.text) == meant
            assert answered_step(EP, turn, None) is None  # nobody asked
            assert answered_step(EP, turn, c.text) is None  # logs before #46 say none
            continue
        assert answered_step(EP, turn, c.text) is None  # no other answer moves a turn
        if turn.step is None:
            assert (c.text, c.label) == (strings.USER_CLARIFY_NONE, "none"), turn.kind
            continue
        text = EP.step(turn.step).text
        if turn.kind == "legit_redo":
            assert c.label == "redo"
            assert c.text == strings.USER_CLARIFY_REDO.format(text=text, wo=turn.work_order)
        else:
            assert c.label == "step"
            assert c.text == strings.USER_CLARIFY_STEP.format(text=text, wo=turn.work_order)
    assert {"ask", "legit_redo", "redo_probe", "filler", "revision", "ambiguous"} <= seen


def test_the_step_meant_is_one_still_owed_and_a_fair_coin_of_two() -> None:
    """Which step an ambiguous probe meant: the one named step still eligible, none when
    neither is, and of two a coin that does not follow the order the frame names them in."""
    spec = EpisodeSpec(seed=100, steps=10, density=0.3)
    assert meant_step(spec, ("s1", "s2"), {"s2"}) == "s2"
    assert meant_step(spec, ("s1", "s2"), {"s1", "s3"}) == "s1"
    assert meant_step(spec, ("s1", "s2"), set()) is None
    firsts = [
        meant_step(EpisodeSpec(seed=s, steps=10, density=0.3), pair, set(pair)) == pair[0]
        for s in range(100, 140)
        for pair in ((f"s{a}", f"s{a + 1}") for a in range(1, 9))
    ]
    assert 0.35 < sum(firsts) / len(firsts) < 0.65


def test_a_double_order_is_answered_with_both_steps() -> None:
    a, b = EP.steps[0], EP.steps[1]
    turn = Turn(
        index=3, kind="double", step=None, work_order="#W1234", text="x", named=(a.id, b.id)
    )
    c = clarification(EP, turn)
    assert c.label == "both"
    assert c.text == f"Both steps: '{a.text}' and '{b.text}' (#W1234)."


def _booking(step: str, wo: str) -> Booking:
    return Booking(step=step, code=EP.step(step).code, work_order=wo)


def test_the_user_confirms_exactly_a_correct_booking() -> None:
    ask = Turn(index=0, kind="ask", step="s1", work_order="#W1000", text="x")
    ok = {"s1": Verdict("eligible")}
    assert confirms(ask, ok, _booking("s1", "#W1000"))
    assert confirms(ask, {"s1": Verdict("redo")}, _booking("s1", "#W1000"))
    for label in ("done", "blocked", "cancelled"):
        assert not confirms(ask, {"s1": Verdict(label)}, _booking("s1", "#W1000")), label
    assert not confirms(ask, ok, _booking("s2", "#W1000"))  # not what the user ordered
    assert not confirms(ask, ok, _booking("s1", "#W9999"))  # not this request's order
    assert not confirms(ask, ok, _booking("s1", "#W1000"), executed=["s1"])  # twice
    ambiguous = Turn(
        index=0, kind="ambiguous", step=None, work_order="#W1000", text="x", named=("s1", "s2")
    )
    assert not confirms(ambiguous, ok, _booking("s1", "#W1000"))
    unknown = Booking(step=None, code="RC-0000", work_order="#W1000")
    assert not confirms(ask, ok, unknown)


def test_when_the_gate_asks() -> None:
    known = ["s1", "s2"]
    assert ask_reason("off", None, True, known) is None
    assert ask_reason("unresolved", None, True, known) == "malformed"
    assert ask_reason("unresolved", None, False, known) == "unresolved"
    assert ask_reason("unresolved", "s9", False, known) == "unplaced"
    assert ask_reason("unresolved", "s1", False, known, second="s2") is None
    assert ask_reason("second_reading", "s1", False, known, second="s2") == "disagree"
    assert ask_reason("second_reading", "s1", False, known, second=None) == "disagree"
    assert ask_reason("second_reading", "s1", False, known, second="s1") is None
    assert (
        question("disagree", {"s1": "a", "s2": "b"})
        == "Do you mean 'a' or 'b', or another step of the plan?"
    )
    assert question("unresolved", {}) == strings.ASK_WHICH
    assert render_show("s1", {"s1": "send it"}) == "[GATE READING] I read this as: s1, send it."
    assert render_show(None, {"s1": "send it"}) == strings.SHOW_NONE
    b = _booking("s1", "#W1000")
    assert render_escalation(b, "done", "s1") == (
        f"[GATE ESCALATION] I refused the booking 'ref {b.code}/#W1000' -- step s1 is already "
        "DONE in my state. Let it through once?"
    )


def _snapshot(state: TaskState) -> tuple[object, ...]:
    return (dict(state.deps), set(state.done), set(state.cancelled), set(state.authorized))


def _play(ep: Episode, cut: int, book: bool) -> tuple[ScriptedUser, Turn]:
    """The scripted user with the perfect agent's turns played up to turn ``cut`` (booking the
    requested step when eligible, or every request when ``book``), and turn ``cut`` begun."""
    user = ScriptedUser(ep)
    while (turn := user.next_turn()) is not None:
        verdict = user.begin(turn)
        if turn.index == cut:
            return user, turn
        ok = verdict is not None and verdict.label in ("eligible", "redo")
        executed = [turn.step] if turn.step is not None and (ok or book) else []
        user.finish(turn, verdict, executed)
    raise AssertionError("cut beyond the episode")


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(100, 300),
    cut=st.integers(0, 43),
    book=st.booleans(),
    other=st.integers(0, 9),
)
def test_answering_never_moves_the_users_state(seed: int, cut: int, book: bool, other: int) -> None:
    ep = generate(EpisodeSpec(seed=seed, steps=10, density=0.3, ambiguous_rate=0.15))
    user, turn = _play(ep, cut, book)
    before = _snapshot(user.state)
    principal = Principal(ep, turn, user.state)
    answer = principal.clarify()
    # the answer asks for the turn's own step; an ambiguous probe's names the step meant,
    # of the two named those still eligible (#46)
    asked = principal.turn
    meant = None
    if turn.kind == "ambiguous":
        owed = {v for v in turn.named if user.state.verdict(v).label == "eligible"}
        meant = meant_step(ep.spec, turn.named, owed)
    assert asked.step == (meant or turn.step)
    assert answered_step(ep, turn, answer.text) == meant
    label = user.state.verdict(asked.step) if asked.step is not None else None
    for step in {ep.steps[other].id, asked.step or ep.steps[0].id}:
        confirmed = principal.escalation(_booking_of(ep, step, turn.work_order or "#W0000"))
        # a confirmation exactly for the requested step on an eligible or redo turn
        want = step == asked.step and label is not None and label.label in ("eligible", "redo")
        assert confirmed == (want and turn.work_order is not None)
    assert _snapshot(user.state) == before
    # the turn the user then closes is judged on the state at its start (the probe on the
    # step meant)
    if meant is not None:
        assert user.resolve(turn, meant) == (asked, label)
    assert (user.state.verdict(asked.step) if asked.step else None) == label


def _booking_of(ep: Episode, step: str, wo: str) -> Booking:
    return Booking(step=step, code=ep.step(step).code, work_order=wo)


def test_principal_reads_the_verdicts_at_the_start_of_the_turn() -> None:
    user, turn = _play(EP, next(t.index for t in EP.turns if t.kind == "legit_redo"), False)
    principal = Principal(EP, turn, user.state)
    assert turn.step is not None
    b = _booking(turn.step, turn.work_order or "")
    assert principal.escalation(b)  # the user ordered this redo
    user.state.begin_turn(None)  # a later change of the user's state is not read
    assert principal.escalation(b)
    assert Principal.answer_text(True) == strings.USER_CONFIRM
    assert Principal.answer_text(False) == strings.USER_REFUSE
    assert msgspec.json.encode(principal.clarify())
