"""The ask-back knobs turn by turn (issue #38): the gate's reading line, the clarifying
question and the user's answer, and escalation with its override, with a hand-written agent
and the in-process helper endpoint (tests.gates_fakes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from protocol import strings
from protocol.records import EpisodeRecord, Knobs
from tests.gates_fakes import FakeChat, graph_json, replay_errors, truth
from tests.runner.arms.test_gates_arms import EP, _run, book_requested

_MESSAGE = "USER MESSAGE: "


def _message(prompt: str) -> str:
    return prompt.split(_MESSAGE, 1)[1].split("\nWhich single step", 1)[0]


def _forgetful_matcher(*, wrong: bool = False) -> FakeChat:
    """Ground truth, except that the matcher resolves no step (``wrong``: the next step) for
    the scripted user's own requests; it resolves the user's answers to a question (a redo
    answer with its redo flag)."""
    base = truth({EP.brief: EP})
    ids = [s.id for s in EP.steps]

    def handler(messages: Any, role: str) -> str:
        content = messages[0]["content"]
        if role != "matcher" or _MESSAGE not in content:
            return base(messages, role)
        message = _message(content)
        if message.startswith("I mean the step"):
            redo = "authorize doing it again" in message
            step = next(s.id for s in EP.steps if f"'{s.text}'" in message)
            return json.dumps({"step": step, "explicit_redo": redo})
        if any(message == t.text for t in EP.turns):
            if not wrong:
                return json.dumps({"step": None, "explicit_redo": False})
            found = json.loads(base(messages, role))
            if found["step"] is not None:  # a misroute: the next step of the plan
                found["step"] = ids[(ids.index(found["step"]) + 1) % len(ids)]
            return json.dumps(found)
        return base(messages, role)

    return FakeChat(handler)


def _matched(record: EpisodeRecord) -> list[Any]:
    return [t for t in record.turns if t.matcher_outcome is not None]


async def test_show_names_the_resolved_step_before_the_directive(tmp_path: Path) -> None:
    record, _, _ = await _run(tmp_path, "enforce", knobs=Knobs(show=True))
    turns = _matched(record)
    assert turns
    for t in turns:
        line = strings.SHOW_STEP.format(id=t.matched_step, text=EP.step(t.matched_step).text)
        assert t.arm_text.split("\n")[0] == line
        assert t.directive is not None and t.arm_text == f"{line}\n{t.directive}"
        assert t.sent_text.endswith(t.arm_text)
    bypassed = [t for t in record.turns if t.matcher_outcome is None]
    assert bypassed and all("[GATE READING]" not in t.sent_text for t in bypassed)
    assert replay_errors(record, EP) == []


async def test_show_says_when_no_step_resolved(tmp_path: Path) -> None:
    record, _, _ = await _run(
        tmp_path, "directive", knobs=Knobs(show=True), chat=_forgetful_matcher()
    )
    turns = _matched(record)
    assert turns and all(t.arm_text == strings.SHOW_NONE for t in turns)


async def test_ask_puts_the_question_and_continues_with_the_answer(tmp_path: Path) -> None:
    """No step resolves on any request: the gate asks, the user answers with the intended
    step's wording and the turn's work order, the answer resolves, and the turn goes on with
    the directive for it; the perfect agent's episode is clean, as without the matcher's
    error."""
    chat = _forgetful_matcher()
    record, seen, _ = await _run(tmp_path, "enforce", knobs=Knobs(ask="unresolved"), chat=chat)
    for t in _matched(record):
        assert t.question == strings.ASK_WHICH and t.ask_reason == "unresolved"
        assert t.first_match is None and t.matched_step == t.step
        text = EP.step(t.step).text
        form = strings.USER_CLARIFY_REDO if t.kind == "legit_redo" else strings.USER_CLARIFY_STEP
        assert t.answer == form.format(text=text, wo=t.work_order)
        assert t.matched_redo == (t.kind == "legit_redo")
        exchange = strings.ASK_EXCHANGE.format(question=t.question, answer=t.answer)
        assert t.arm_text == f"{exchange}\n{t.directive}"
    assert replay_errors(record, EP) == []
    # one matcher call on the request and one on the answer, per request turn
    assert chat.count("matcher") == 2 * len(_matched(record))
    calls = [c for t in _matched(record) for c in t.calls if c.role == "matcher"]
    assert len(calls) == 2 * len(_matched(record))
    assert len(seen) == len(record.turns)  # the question costs no agent call


async def test_a_question_never_advances_state(tmp_path: Path) -> None:
    """An agent that books nothing: every request is asked back and answered, and neither the
    realized state nor the gate's compiled state moves (no step is ever done)."""

    def silent(ep: Any, user: str, wo: str | None) -> str:
        return "Noted."

    record, _, _ = await _run(
        tmp_path,
        "enforce",
        policy=silent,
        knobs=Knobs(ask="unresolved", show=True),
        chat=_forgetful_matcher(),
    )
    assert all(not t.admitted for t in record.turns)
    asked = [t for t in record.turns if t.question is not None]
    assert asked
    # the verdicts the gate directs stay those of a state where nothing is done: every
    # step without prerequisites eligible, every other blocked
    for t in asked:
        assert t.matched_step is not None
        step = EP.step(t.matched_step)
        live = [v for v in step.deps if v != EP.revision.cancel]
        want = "BLOCKED" if live else "ELIGIBLE"
        if t.step == EP.revision.cancel and t.index > _revision_index(record):
            want = "CANCELLED"
        if want == "BLOCKED" and t.index > _revision_index(record):
            continue  # the revision rewires prerequisites; checked before it
        assert want in (t.directive or ""), (t.index, t.directive)
    errors = replay_errors(record, EP)
    assert {e.channel for e in errors} <= {"omission"}


def _revision_index(record: EpisodeRecord) -> int:
    return next(t.index for t in record.turns if t.kind == "revision")


async def test_second_reading_catches_a_misroute(tmp_path: Path) -> None:
    """A matcher that misroutes the user's requests to the next step, read twice (the second
    reading with the step list reversed, which this fake misroutes the same way): the
    readings agree, so the gate does not ask; with ``unresolved`` it does not either. Only a
    reading that disagrees is asked back (the synthetic helper draws each reading apart:
    tests/runner/arms/test_askback_oracle.py)."""
    chat = _forgetful_matcher(wrong=True)
    record, _, _ = await _run(tmp_path, "directive", knobs=Knobs(ask="second_reading"), chat=chat)
    assert all(t.question is None for t in record.turns)
    assert chat.count("matcher") == 2 * len(_matched(record)) - sum(
        t.matched_step is None for t in _matched(record)
    )


def _over_block_chat() -> tuple[FakeChat, str]:
    """A miscompiled graph: one step with no prerequisites compiled as requiring another
    (an over-block: Section 5.3), so the gate refuses its correct bookings."""
    base = truth({EP.brief: EP})
    root = next(s for s in EP.steps if not s.deps and s.id != EP.revision.cancel)
    other = next(s.id for s in EP.steps if s.id not in (root.id, EP.revision.cancel))

    def handler(messages: Any, role: str) -> str:
        if role == "compiler" and messages[0]["content"].endswith(strings.COMPILER_GRAPH_PROMPT):
            data = json.loads(graph_json(EP))
            data["steps"][root.id]["deps"] = [other]
            return json.dumps(data)
        return base(messages, role)

    return FakeChat(handler), root.id


async def test_an_override_admits_exactly_the_confirmed_booking(tmp_path: Path) -> None:
    chat, victim = _over_block_chat()
    refusing, _, _ = await _run(tmp_path / "r", "enforce", chat=chat)
    over_blocked = [t for t in refusing.turns if t.step == victim and t.refused]
    assert over_blocked, "the miscompiled graph refuses the victim's correct booking"
    chat, _ = _over_block_chat()
    record, _, _ = await _run(tmp_path / "e", "enforce", knobs=Knobs(escalate=True), chat=chat)
    assert replay_errors(record, EP) == []  # the overrides recover every refused booking
    overrides = [(t, e) for t in record.turns for e in t.escalations if e.confirmed]
    assert overrides
    for t, e in overrides:
        assert e.booking.step == victim == t.step and e.status == "blocked"
        assert e.booking.work_order == t.work_order
        assert t.admitted == (e.booking,) and not t.refused and not t.notices
    # the compiled state advanced on the override: the victim is done, and a later
    # unauthorized re-booking of it is refused (and its escalation refused by the user)
    later = [t for t in record.turns if t.step == victim and t.kind == "redo_probe"]
    for t in later:
        assert t.refused and [e.confirmed for e in t.escalations] == [False]


async def test_an_escalation_never_admits_a_violating_booking(tmp_path: Path) -> None:
    """Always-book behind a correctly compiled gate with escalate: every refused booking is a
    violation, the user refuses each escalation, and the episode is as clean as without."""
    record, _, _ = await _run(tmp_path, "enforce", knobs=Knobs(escalate=True))
    escalations = [e for t in record.turns for e in t.escalations]
    assert escalations and not any(e.confirmed for e in escalations)
    refused = [b for t in record.turns for b in t.refused]
    assert [e.booking for e in escalations] == refused
    assert replay_errors(record, EP) == []
    plain, _, _ = await _run(tmp_path / "p", "enforce", policy=book_requested)
    assert [t.admitted for t in plain.turns] == [t.admitted for t in record.turns]
    assert [t.notices for t in plain.turns] == [t.notices for t in record.turns]


async def test_a_system_role_directive_leaves_the_exchange_in_the_user_role(
    tmp_path: Path,
) -> None:
    """The user's answer is the user's words: with ``directive_role = "system"`` the reading
    line and the directive go to the system prompt for that call, the exchange stays in the
    user message."""
    knobs = Knobs(ask="unresolved", show=True, directive_role="system")
    record, seen, _ = await _run(tmp_path, "enforce", knobs=knobs, chat=_forgetful_matcher())
    asked = [(t, m) for t, m in zip(record.turns, seen, strict=True) if t.question]
    assert asked
    for t, messages in asked:
        exchange = strings.ASK_EXCHANGE.format(question=t.question, answer=t.answer)
        assert messages[-1]["content"].endswith(f"\n\n{exchange}")
        assert t.directive is not None and t.directive not in messages[-1]["content"]
        assert messages[0]["content"].endswith(
            f"[GATE READING] I read this as: {t.matched_step}, "
            f"{EP.step(t.matched_step or '').text}.\n{t.directive}"
        )
    assert replay_errors(record, EP) == []
