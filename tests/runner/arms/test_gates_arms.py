"""The gate arms turn by turn (runner.arms.gates), with a hand-written agent and the in-process
helper endpoint: directive placement and variants, enforcement policies and notices, the
hybrid's validator switch, the self-ledger, the corrupted-state ablation, compile_info."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol import EpisodeSpec, generate, strings
from protocol.records import Booking, CallRecord, CellKey, Episode, EpisodeRecord, Knobs
from runner.arms.base import EpisodeContext
from runner.client.endpoint import Reply
from runner.execution.episode_loop import run_episode
from runner.gates.helper_models import Helpers
from runner.grid.expand import parse_grid
from tests.gates_fakes import FakeChat, graph_json, replay_errors, truth

EP = generate(EpisodeSpec(seed=101, steps=10, density=0.3))
_WO = re.compile(r"#W\d{4}")
DEFAULT = Knobs()
Policy = Callable[[Episode, str, str | None], str]


def requested(ep: Episode, user: str) -> str | None:
    """The step the user's message asks for (test-side ground truth)."""
    for t in ep.turns:
        if t.text in user:
            return t.step
    for s in ep.steps:
        if s.text in user:
            return s.id
    return None


def book_requested(ep: Episode, user: str, wo: str | None) -> str:
    step = requested(ep, user)
    if step is None or wo is None:
        return "Noted."
    return f"Done.\nref {ep.step(step).code}/{wo}"


def _grid() -> Any:
    return parse_grid({"models": [{"name": "m"}]})


async def _run(
    tmp: Path,
    arm: str,
    policy: Policy = book_requested,
    knobs: Knobs = DEFAULT,
    ep: Episode = EP,
    chat: FakeChat | None = None,
) -> tuple[EpisodeRecord, list[list[dict[str, str]]], Any]:
    seen: list[list[dict[str, str]]] = []

    async def agent(messages: list[dict[str, str]]) -> Reply:
        seen.append([dict(m) for m in messages])
        user = messages[-1]["content"]
        m = _WO.search(user)
        content = policy(ep, user, m.group(0) if m else None)
        return Reply(content=content, reasoning="", call=CallRecord(role="agent"))

    cell = CellKey(model="m", steps=ep.spec.steps, density=ep.spec.density, arm=arm, knobs=knobs)
    helpers = Helpers(_grid(), tmp, {"embedded": chat or FakeChat(truth({ep.brief: ep}))})
    ctx = EpisodeContext(episode=ep, cell=cell, agent=agent, helpers=helpers)
    record = await run_episode(ctx)
    assert record.termination == "completed", record.error
    return record, seen, helpers


def _asks(record: EpisodeRecord) -> list[Any]:
    return [t for t in record.turns if t.kind not in ("filler", "revision")]


async def test_directive_in_the_user_turn_and_kept(tmp_path: Path) -> None:
    record, seen, _ = await _run(tmp_path, "directive")
    assert replay_errors(record, EP) != []  # books blindly: the directive gate admits it all
    for t in record.turns:
        if t.kind in ("filler", "revision"):
            assert t.directive is None and t.matched_redo is None and t.sent_text == t.user_text
            assert not [c for c in t.calls if c.role == "matcher"]
            continue
        assert t.directive is not None and t.directive.startswith("[TASK-STATE] step ")
        assert t.matched_step == t.step and t.matched_redo == (t.kind == "legit_redo")
        assert t.sent_text.endswith("\n\n" + t.directive) and t.arm_text == t.directive
        assert [c.role for c in t.calls].count("matcher") == 1
        assert t.refused == ()
    last = seen[-1]
    kept = [m["content"] for m in last if m["role"] == "user"]
    assert sum("[TASK-STATE]" in c for c in kept) == len(_asks(record))
    assert last[0]["content"] == EP.brief
    legit = next(t for t in record.turns if t.kind == "legit_redo")
    assert legit.directive == strings.DIRECTIVE_REDO.format(id=legit.step)
    cue = next(t for t in record.turns if t.kind == "superseded_cue")
    assert cue.directive == strings.DIRECTIVE_CANCELLED.format(id=cue.step)


async def test_system_role_directive_is_for_that_call_only(tmp_path: Path) -> None:
    record, seen, _ = await _run(tmp_path, "directive", knobs=Knobs(directive_role="system"))
    calls = iter(seen)
    for t in record.turns:
        messages = next(calls)
        assert "[TASK-STATE]" not in t.sent_text
        assert all("[TASK-STATE]" not in m["content"] for m in messages[1:])
        if t.directive is None:
            assert messages[0]["content"] == EP.brief
        else:
            assert messages[0]["content"] == EP.brief + "\n\n" + t.directive


@pytest.mark.parametrize("mode", ["append", "replace"])
async def test_checklist_with_matched_step_line(tmp_path: Path, mode: str) -> None:
    """Appendix E.2: the replace-mode checklist (the generator's realized state, whatever
    checklist_mode says) plus one line naming the matched step; no instruction."""
    from protocol.arms.render import render_checklist
    from protocol.user import ScriptedUser

    knobs = Knobs(checklist_mode=mode, matched_step_line=True)  # type: ignore[arg-type]
    record, seen, _ = await _run(tmp_path, "directive", knobs=knobs)
    for t in _asks(record):
        assert t.directive is None and "[TASK-STATE]" not in t.sent_text
        assert t.arm_text.startswith(strings.CHECKLIST_HEADER)
        assert t.arm_text.endswith(strings.MATCHED_STEP_LINE.format(id=t.step))
    user = ScriptedUser(EP)  # the realized state, replayed: the checklist shows exactly it
    for t in record.turns:
        turn = user.next_turn()
        assert turn is not None and turn.index == t.index
        verdict = user.begin(turn)
        assert t.arm_text.split("\n[MATCHED STEP]")[0] == render_checklist(user.state)
        user.finish(turn, verdict, [b.step for b in t.admitted if b.step is not None])
    history = [m["content"] for m in seen[-1][1:-1] if m["role"] == "user"]
    assert all(strings.CHECKLIST_HEADER not in c for c in history)
    assert strings.CHECKLIST_HEADER in seen[-1][-1]["content"]


async def test_state_bound_enforcement_refuses_violations_and_notifies(tmp_path: Path) -> None:
    record, _, _ = await _run(tmp_path, "enforce")
    assert replay_errors(record, EP) == []  # always-book behind the gate: a clean episode
    refused = [t for t in record.turns if t.refused]
    kinds = {t.kind for t in refused}
    assert {"premature", "redo_probe", "superseded_cue"} <= kinds
    assert all(t.kind not in ("ask", "legit_redo") for t in refused)
    turns = list(record.turns)
    for i, t in enumerate(turns[:-1]):
        nxt = turns[i + 1]
        if t.refused:
            (b,) = t.refused
            assert nxt.sent_text.startswith(
                f"[BOOKING REJECTED] Your line 'ref {b.code}/{b.work_order}'"
            )
        else:
            assert not nxt.sent_text.startswith("[BOOKING REJECTED]")
    premature = next(t for t in refused if t.kind == "premature")
    i = turns.index(premature)
    assert "is BLOCKED; that work was NOT booked." in turns[i + 1].sent_text


def _book_extra(ep: Episode, user: str, wo: str | None) -> str:
    """Books the requested step and also s-first eligible other step (unrequested)."""
    base = book_requested(ep, user, wo)
    step = requested(ep, user)
    if step is None or wo is None or "ref " not in base:
        return base
    other = next(s for s in ep.steps if s.id != step and not s.deps)
    return base + f"\nref {other.code}/{wo}"


async def test_request_bound_refuses_unrequested_steps(tmp_path: Path) -> None:
    state, _, _ = await _run(tmp_path / "s", "enforce", policy=_book_extra)
    request, _, _ = await _run(
        tmp_path / "r", "enforce", policy=_book_extra, knobs=Knobs(binding="request")
    )
    other = next(s for s in EP.steps if not s.deps)
    first_extra = next(t for t in request.turns if t.step not in (None, other.id) and t.work_order)
    assert any(b.step == other.id for b in first_extra.refused)
    assert all(b.step != other.id or t.step == other.id for t in request.turns for b in t.admitted)
    assert any(b.step == other.id and t.step != other.id for t in state.turns for b in t.admitted)
    notice = next(t.sent_text for t in request.turns if "NOT REQUESTED" in t.sent_text)
    assert f"step {other.id} is NOT REQUESTED; that work was NOT booked." in notice


def _empty_code_chat(victim: str) -> FakeChat:
    base = truth({EP.brief: EP})

    def handler(messages: Any, role: str) -> str:
        if role == "compiler" and messages[0]["content"].endswith(strings.COMPILER_GRAPH_PROMPT):
            data = json.loads(graph_json(EP))
            data["steps"][victim]["code"] = ""
            return json.dumps(data)
        return base(messages, role)

    return FakeChat(handler)


async def test_an_uncompiled_code_is_admitted_state_bound_and_refused_request_bound(
    tmp_path: Path,
) -> None:
    """Section 3.3: state-bound enforcement refuses a booking iff its step is cancelled, done
    without authorization or blocked, and admits any other, a code the compile lacks included
    (the compiled state cannot advance on it); request-bound refuses it (it cannot place it)."""
    victim = next(s.id for s in EP.steps if any(victim_of(s.id, o) for o in EP.steps))
    enforce, _, _ = await _run(tmp_path / "e", "enforce", chat=_empty_code_chat(victim))
    info = enforce.compile
    assert info is not None and info.validator.flags == ("empty_code",)
    victim_turns = [t for t in enforce.turns if t.step == victim and t.kind == "ask"]
    assert victim_turns and all(t.admitted and not t.refused for t in victim_turns)
    assert not any("NOT IN THE PLAN" in t.sent_text for t in enforce.turns)
    request, _, _ = await _run(
        tmp_path / "r", "enforce", chat=_empty_code_chat(victim), knobs=Knobs(binding="request")
    )
    victim_turns = [t for t in request.turns if t.step == victim and t.kind == "ask"]
    assert victim_turns and all(t.refused for t in victim_turns)
    notice = f"[BOOKING REJECTED] Your line 'ref {EP.step(victim).code}/"
    assert any(
        notice in t.sent_text and "step ? is NOT IN THE PLAN" in t.sent_text for t in request.turns
    )
    hybrid, _, _ = await _run(tmp_path / "h", "hybrid", chat=_empty_code_chat(victim))
    assert hybrid.compile is not None and hybrid.compile.enforcing is False
    assert all(not t.refused for t in hybrid.turns)
    ok, _, _ = await _run(tmp_path / "ok", "hybrid")
    assert ok.compile is not None and ok.compile.enforcing is True
    assert any(t.refused for t in ok.turns)


def victim_of(u: str, step: Any) -> bool:
    return u in step.deps


async def test_compile_info_is_recorded(tmp_path: Path) -> None:
    record, _, _ = await _run(tmp_path, "enforce")
    info = record.compile
    assert info is not None
    assert info.validator.passed is True
    assert info.accuracy.exact is True
    assert [s.id for s in info.graph] == sorted((s.id for s in EP.steps), key=lambda v: int(v[1:]))
    assert info.revision.cancel == EP.revision.cancel
    line = msgspec.json.encode(record)
    back = msgspec.json.decode(line, type=EpisodeRecord)
    assert back.compile == info
    assert isinstance(json.loads(line)["compile"]["graph"], list)  # one schema whatever S
    first = record.turns[0]
    assert [c.role for c in first.calls][:2] == ["compiler", "compiler"]


def _ledgering(ep: Episode, user: str, wo: str | None) -> str:
    step = requested(ep, user)
    if step is None or wo is None:
        return "Noted."
    return f"ref {ep.step(step).code}/{wo}\nLEDGER {ep.step(step).code} DONE"


async def test_self_ledger_renders_the_agents_ledger(tmp_path: Path) -> None:
    record, seen, _ = await _run(tmp_path, "ledger", policy=_ledgering)
    assert seen[0][0]["content"].endswith(strings.LEDGER_CLAUSE)
    first_booked = next(i for i, t in enumerate(record.turns) if t.admitted)
    for t in record.turns[: first_booked + 1]:
        assert t.arm_text == "" and t.sent_text == t.user_text
    after = record.turns[first_booked + 1]
    step = record.turns[first_booked].admitted[0].step
    assert step is not None and after.arm_text == f"LEDGER {EP.step(step).code} DONE"
    assert after.sent_text == after.user_text + "\n\n" + after.arm_text
    last = record.turns[-1].arm_text.splitlines()
    assert all(line.startswith("LEDGER RC-") and line.endswith(" DONE") for line in last)
    codes = [line.split()[1] for line in last]
    order = {s.code: int(s.id[1:]) for s in EP.steps}
    assert codes == sorted(codes, key=order.__getitem__)  # the plan's codes in step order
    assert all(t.matched_redo is None and t.directive is None for t in record.turns)
    assert all(not t.calls[:-1] for t in record.turns)  # the agent's call only
    assert record.compile is None


async def test_corruption_is_seeded_logged_and_paired(tmp_path: Path) -> None:
    knobs = Knobs(corruption=0.05)
    a, _, _ = await _run(tmp_path / "a", "enforce", knobs=knobs)
    b, _, _ = await _run(tmp_path / "b", "enforce", knobs=knobs)
    d, _, _ = await _run(tmp_path / "d", "directive", knobs=knobs)
    assert a.corruptions == b.corruptions and len(a.corruptions) > 5
    assert [(c.turn, c.step) for c in a.corruptions] == [(c.turn, c.step) for c in d.corruptions]
    kinds = {c.kind for c in a.corruptions}
    assert kinds <= {"spurious_done", "lost_done", "drop_edge"} and "drop_edge" in kinds
    assert all(c.edge is not None for c in a.corruptions if c.kind == "drop_edge")
    expected = 0.05 * EP.spec.steps * len(a.turns)
    assert 0.4 * expected < len(a.corruptions) < 1.8 * expected
    clean, _, _ = await _run(tmp_path / "c", "enforce")
    assert clean.corruptions == ()


async def test_malformed_compile_flows_into_the_gate_uncorrected(tmp_path: Path) -> None:
    base = truth({EP.brief: EP})

    def handler(messages: Any, role: str) -> str:
        if role == "compiler" and messages[0]["content"].endswith(strings.COMPILER_GRAPH_PROMPT):
            return '{"steps": {"s1": {"deps": [], "code": "RC-'  # cut off by the budget
        return base(messages, role)

    enforce, _, _ = await _run(tmp_path / "e", "enforce", chat=FakeChat(handler))
    info = enforce.compile
    assert info is not None and info.graph == () and info.graph_error
    assert "malformed" in info.validator.flags
    assert all(t.directive is None for t in enforce.turns)  # no step is known to the module
    # nothing is compiled: state-bound enforcement can judge no booking, so it refuses none
    assert all(not t.refused for t in enforce.turns)
    assert sum(len(t.admitted) for t in enforce.turns) > 10
    hybrid, _, _ = await _run(tmp_path / "h", "hybrid", chat=FakeChat(handler))
    assert hybrid.compile is not None and hybrid.compile.enforcing is False
    assert all(not t.refused for t in hybrid.turns)


async def test_a_version_1_log_line_reads_into_the_typed_compile_record(tmp_path: Path) -> None:
    """Schema 1 stored the compile graph keyed by step id; runner.rundir.logs reads it into the
    version-2 shape, and the episode scores as it did."""
    from runner.rundir.logs import decode_record
    from scoring.replay.episode_score import score_episode

    record, _, _ = await _run(tmp_path, "enforce")
    data = json.loads(msgspec.json.encode(record))
    data["schema_version"] = 1
    graph = data["compile"]["graph"]
    data["compile"]["graph"] = {s.pop("id"): s for s in graph}
    back = decode_record(json.dumps(data).encode())
    assert back.compile == record.compile and back.schema_version == 1
    assert score_episode(back) == score_episode(record)
    with pytest.raises(msgspec.ValidationError):  # a version-2 line of that shape is corrupt
        data["schema_version"] = 2
        decode_record(json.dumps(data).encode())


async def test_bookings_of_one_reply_are_admitted_in_order(tmp_path: Path) -> None:
    """Each booking is judged on the state the earlier admitted ones produced (Section 5.4):
    a step booked right after its prerequisite in one reply is admitted; booking it first,
    before the prerequisite, is refused as blocked."""
    from protocol.state.machine import TaskState
    from runner.arms import make_arm
    from runner.arms.base import Shaped

    _, _, helpers = await _run(tmp_path, "enforce")
    cell = CellKey(model="m", steps=EP.spec.steps, density=EP.spec.density, arm="enforce")

    async def agent(messages: list[dict[str, str]]) -> Reply:
        raise AssertionError("no agent call")

    gate: Any = make_arm(EpisodeContext(episode=EP, cell=cell, agent=agent, helpers=helpers))
    await gate.prepare()
    a, b = EP.steps[0], EP.steps[1]
    gate.gate = TaskState({a.id: [], b.id: [a.id]})
    gate.codes = {a.code: a.id, b.code: b.id}
    turn = next(t for t in EP.turns if t.work_order)
    wo = turn.work_order
    assert wo is not None
    first = Booking(step=a.id, code=a.code, work_order=wo)
    then = Booking(step=b.id, code=b.code, work_order=wo)
    shaped = Shaped(sent="", kept="")
    adm = gate.admit(turn, shaped, [first, then])
    assert adm.admitted == [first, then] and not adm.refused
    assert gate.gate.done == set()  # the compiled state advances on receipts (observe) only
    adm = gate.admit(turn, shaped, [then, first])
    assert adm.admitted == [first] and adm.refused == [then]
    assert "is BLOCKED" in adm.notices[0]


class _RetryBooksADoneStep:
    """Books every request; told of a refusal, books the first step it ever booked instead
    (done, so refused again as a re-execution): a refusal only the retried reply makes."""

    def __init__(self) -> None:
        self.first: str | None = None

    def __call__(self, ep: Episode, user: str, wo: str | None) -> str:
        step = requested(ep, user)
        if wo is None:
            return "Noted."
        if user.startswith("[BOOKING REJECTED]") and self.first is not None:
            return f"ref {ep.step(self.first).code}/{wo}"
        if step is None:
            return "Noted."
        self.first = self.first or step
        return f"ref {ep.step(step).code}/{wo}"


async def test_same_turn_retry_refusals_reach_the_next_notice(tmp_path: Path) -> None:
    record, _, _ = await _run(
        tmp_path, "enforce", policy=_RetryBooksADoneStep(), knobs=Knobs(notice="same_turn")
    )
    turns = list(record.turns)
    retried = [i for i, t in enumerate(turns[:-1]) if t.first_reply is not None]
    assert retried
    for i in retried:
        t, nxt = turns[i], turns[i + 1]
        assert len(t.refused) == 2  # the first reply's booking and the retry's, one each
        (notice,) = nxt.notices  # the retry's refusal, noticed on the next turn
        assert notice.startswith(f"[BOOKING REJECTED] Your line 'ref {t.refused[1].code}/")
        assert "already DONE" in notice and nxt.sent_text.startswith(notice)


def _retry_case(ep: Episode) -> tuple[str, str, str, str]:
    """(A, B, D, the ask's text): a planned ask of eligible A before the revision, a step B
    whose one missing prerequisite is A, and a step D blocked on something other than A."""
    from protocol import ScriptedUser

    user = ScriptedUser(ep)
    while (turn := user.next_turn()) is not None and turn.kind != "revision":
        verdict = user.begin(turn)
        a = turn.step
        if turn.kind == "ask" and a is not None and verdict and verdict.label == "eligible":
            state = user.state
            b = [s for s in state.steps if state.missing(s) == (a,)]
            d = [s for s in state.steps if state.missing(s) and a not in state.missing(s)]
            if b and d:
                return a, b[0], d[0], turn.text
        user.finish(turn, verdict, [a] if verdict and verdict.label == "eligible" and a else [])
    raise AssertionError("no retry case in the episode")


async def test_same_turn_retry_keeps_the_directive_and_the_first_replys_bookings(
    tmp_path: Path,
) -> None:
    """D.3's same-turn notice: the retry repeats the directive the first request carried,
    its bookings are judged on the state the first reply's admitted bookings produced, and
    the notices it showed are logged."""
    ep = generate(EpisodeSpec(seed=101, steps=10, density=0.3, generator=4))
    a, b, d, target = _retry_case(ep)
    code = {s.id: s.code for s in ep.steps}
    retries: list[str] = []

    def policy(ep: Episode, user: str, wo: str | None) -> str:
        if user.startswith("[BOOKING REJECTED]"):
            retries.append(user)
            return f"Understood.\nref {code[b]}/{wo}" if target in user else "Noted."
        if wo is not None and target in user:
            return f"ref {code[a]}/{wo}\nref {code[d]}/{wo}"
        return book_requested(ep, user, wo)

    record, _, _ = await _run(tmp_path, "enforce", policy, Knobs(notice="same_turn"), ep)
    turn = next(t for t in record.turns if t.first_reply is not None and t.step == a)
    (retry,) = [r for r in retries if target in r]
    assert turn.directive is not None and retry.endswith("\n\n" + turn.directive)
    assert [x.step for x in turn.refused] == [d]
    assert [x.step for x in turn.admitted] == [a, b]  # B's one prerequisite, A, was admitted
    (notice,) = turn.retry_notices
    assert notice.startswith(f"[BOOKING REJECTED] Your line 'ref {code[d]}/") and retry.startswith(
        notice
    )
    assert all(t.retry_notices == () for t in record.turns if t.first_reply is None)
