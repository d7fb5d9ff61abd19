"""The trap-turn probe's pure core (protocol.probe.turns): the rebuilt history is byte-identical to
what the runner sent for every turn of every arm, and each variant changes exactly the one
thing it names."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol import EpisodeSpec, generate, strings
from protocol.arms.render import render_checklist, render_directive
from protocol.arms.table import memory_arms
from protocol.brief import tool_name
from protocol.domains.known import POOLS
from protocol.probe.history import realized_states, rebuild_messages
from protocol.probe.turns import VARIANTS, Variant, find_traps, strip_work_order, variant_messages
from protocol.records import CallRecord, CellKey, Episode, EpisodeRecord, Knobs
from protocol.state.receipts import find_actions, find_refs
from runner.arms.base import EpisodeContext
from runner.client.endpoint import Reply
from runner.execution.episode_loop import run_episode
from runner.gates.helper_models import Helpers
from runner.grid.expand import Grid, parse_grid
from tests.gates_fakes import FakeChat, truth

EP = generate(EpisodeSpec(seed=101, steps=10, density=0.3))
DEFAULT = Knobs()
_WO = re.compile(r"#W\d{4}")


def _book_requested(ep: Episode, user: str, wo: str | None, tools: bool = False) -> str:
    """Books whatever the message names (so redo probes are re-executed); with ``tools``
    the booking line is the step's ACTION line."""
    step = next((t.step for t in ep.turns if t.text in user), None)
    if step is None:
        step = next((s.id for s in ep.steps if s.text in user), None)
    if step is None or wo is None:
        return "Noted."
    s = ep.step(step)
    line = _action(tool_name(s), wo) if tools else f"ref {s.code}/{wo}"
    return f"On it.\n{line}\nLEDGER {s.code} DONE"


class _Embedding(FakeChat):
    """FakeChat plus the embeddings call the memory arms make (hash vectors)."""

    async def embed(
        self, model: str, inputs: Sequence[str]
    ) -> tuple[list[list[float]], CallRecord]:
        rows = [[b / 255 for b in hashlib.sha256(t.encode()).digest()[:16]] for t in inputs]
        return rows, CallRecord(role="embedding")


def _grid() -> Grid:
    return parse_grid({"models": [{"name": "m"}]})


Sent = list[list[dict[str, str]]]


async def _episode(
    tmp: Path,
    arm: str,
    knobs: Knobs,
    ep: Episode,
    answer: Callable[[list[dict[str, str]], int], str],
) -> tuple[EpisodeRecord, Sent]:
    """One episode whose agent replies ``answer(messages, requests so far)``; the record
    and every request the agent was sent, in order."""
    seen: Sent = []

    async def agent(messages: list[dict[str, str]]) -> Reply:
        seen.append([dict(m) for m in messages])
        content = answer(messages, len(seen))
        return Reply(content=content, reasoning="", call=CallRecord(role="agent"))

    cell = CellKey(model="m", steps=ep.spec.steps, density=ep.spec.density, arm=arm, knobs=knobs)
    helpers = Helpers(_grid(), tmp, {"embedded": _Embedding(truth({ep.brief: ep}))})
    ctx = EpisodeContext(episode=ep, cell=cell, agent=agent, helpers=helpers)
    record = await run_episode(ctx)
    assert record.termination == "completed", record.error
    return record, seen


async def run_arm(
    tmp: Path, arm: str, knobs: Knobs = DEFAULT, ep: Episode = EP
) -> tuple[EpisodeRecord, Sent]:
    def answer(messages: list[dict[str, str]], _: int) -> str:
        user = messages[-1]["content"]
        m = _WO.search(user)
        tools = strings.TOOL_CLAUSE in messages[0]["content"]
        return _book_requested(ep, user, m.group(0) if m else None, tools)

    return await _episode(tmp, arm, knobs, ep, answer)


CASES: list[tuple[str, Knobs]] = [
    ("raw", Knobs()),
    ("raw", Knobs(tools=True)),
    ("checklist", Knobs()),
    ("checklist", Knobs(checklist_mode="replace")),
    ("ledger", Knobs()),
    ("ledger", Knobs(checklist_mode="replace")),
    ("directive", Knobs()),
    ("directive", Knobs(directive_role="system")),
    ("directive", Knobs(matched_step_line=True)),
    ("enforce", Knobs()),
    ("enforce", Knobs(notice="same_turn")),
    ("enforce", Knobs(binding="request")),
    ("hybrid", Knobs()),
    ("memory-topk", Knobs()),
    ("memory-topk", Knobs(memory_mode="augment")),
]


@pytest.mark.parametrize(("arm", "knobs"), CASES, ids=[f"{a}-{k!r}" for a, k in CASES])
async def test_rebuilt_history_is_what_the_runner_sent(
    tmp_path: Path, arm: str, knobs: Knobs
) -> None:
    record, seen = await run_arm(tmp_path, arm, knobs)
    first = 0  # index in ``seen`` of each turn's first agent call
    checked = 0
    for pos, t in enumerate(record.turns):
        assert rebuild_messages(record, EP, pos) == seen[first]
        checked += 1
        first += sum(c.role == "agent" for c in t.calls)
    assert first == len(seen) and checked == len(record.turns) > 40
    if knobs.notice == "same_turn":
        assert any(t.first_reply is not None for t in record.turns)  # a retry happened


def _diff(a: list[dict[str, str]], b: list[dict[str, str]]) -> list[int]:
    assert len(a) == len(b)
    return [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]


VARIANT_CASES = [(a, k) for a, k in CASES if not (a == "memory-topk" and k.memory_mode == "record")]


@pytest.mark.parametrize(
    ("arm", "knobs"), VARIANT_CASES, ids=[f"{a}-{k!r}" for a, k in VARIANT_CASES]
)
async def test_each_variant_changes_exactly_the_one_thing(
    tmp_path: Path, arm: str, knobs: Knobs
) -> None:
    record, _ = await run_arm(tmp_path, arm, knobs)
    states = realized_states(record, EP)
    traps = find_traps(record, EP, states=states)
    assert len(traps) >= 1 and all(t.kind == "redo_probe" for t in traps)
    if arm == "raw":
        assert len(traps) == 2
    assert all(t.booked_at is not None for t in traps)
    # (the test agent reads the memory arms' recall block as a request too)
    assert arm in memory_arms() or all(t.recorded_rebooked for t in traps)
    for trap in traps:
        t = record.turns[trap.position]
        base = rebuild_messages(record, EP, trap.position)
        state = states[trap.position]
        assert state.status(trap.step or "") == "done"
        got: dict[str, Any] = {v: variant_messages(record, EP, trap, v, state) for v in VARIANTS}
        assert got["as_recorded"] == base
        last = len(base) - 1
        step = EP.step(trap.step or "")
        for v in ("confirm", "status", "no_work_order"):
            m = got[v]
            assert m is not None and _diff(base, m) == [last]
            assert t.user_text not in m[last]["content"]
        sent = base[last]["content"]
        assert sent.count(t.user_text) == 1

        def asked(text: str, sent: str = sent, user: str = t.user_text) -> str:
            return sent.replace(user, text)  # notices and the arm's addition kept

        confirm = got["confirm"]
        assert confirm[last]["content"] == asked(
            strings.PROBE_CONFIRM.format(text=step.text, wo=trap.work_order)
        )
        wordings = {tp.slug: tp.status for tp in POOLS[EP.spec.domain].templates}[step.slug]
        status = got["status"][last]["content"]
        assert status in [asked(w.format(wo=trap.work_order)) for w in wordings]
        nwo = got["no_work_order"][last]["content"]
        assert nwo == asked(strip_work_order(t.user_text))
        assert not _WO.search(strip_work_order(t.user_text))
        checklist = render_checklist(state)
        directive = render_directive(step.id, state.verdict(step.id))
        assert directive == strings.DIRECTIVE_DONE.format(id=step.id)
        for v, idx, text in (
            ("checklist_user", last, checklist),
            ("checklist_system", 0, checklist),
            ("directive_user", last, directive),
            ("directive_system", 0, directive),
        ):
            m = got[v]
            assert m is not None and _diff(base, m) == [idx], v
            assert m[idx]["content"] == base[idx]["content"] + "\n\n" + text
        booked = 1 + 2 * (trap.booked_at or 0) + 1
        assert base[booked]["role"] == "assistant"
        for v in ("prose", "erased"):
            m = got[v]
            assert m is not None and _diff(base, m) == [booked], v
            assert not [r for r in find_refs(m[booked]["content"]) if r.code == step.code]
            assert not find_actions(m[booked]["content"])
        prose, erased = got["prose"], got["erased"]
        assert prose is not None and erased is not None
        wo = record.turns[trap.booked_at or 0].work_order
        if knobs.tools:
            rewrite = strings.PROBE_PROSE_TOOL_BOOKING.format(
                id=step.id, text=step.text, wo=wo, tool=tool_name(step)
            )
        else:
            rewrite = strings.PROBE_PROSE_BOOKING.format(
                id=step.id, text=step.text, wo=wo, code=step.code
            )
        assert prose[booked]["content"] == "On it.\n" + rewrite + "\nLEDGER " + step.code + " DONE"
        assert erased[booked]["content"] == "On it.\nLEDGER " + step.code + " DONE"


async def test_prose_and_erased_need_the_booking_reply_in_the_window(tmp_path: Path) -> None:
    """The memory arms' record mode keeps the last two exchanges: an earlier booking reply
    is not in the prompt, so there is nothing to rewrite (the variant does not apply)."""
    record, _ = await run_arm(tmp_path, "memory-topk", Knobs(memory_mode="record"))
    states = realized_states(record, EP)
    traps = find_traps(record, EP, states=states)
    assert traps
    for trap in traps:
        base = rebuild_messages(record, EP, trap.position)
        assert len(base) == 1 + 4 + 1
        in_window = trap.position - (trap.booked_at or 0) <= 2
        for v in ("prose", "erased"):
            got = variant_messages(record, EP, trap, v, states[trap.position])
            assert (got is not None) == in_window
        other = variant_messages(record, EP, trap, "checklist_user", states[trap.position])
        assert other is not None and _diff(base, other) == [len(base) - 1]


async def test_other_trap_kinds_are_selectable(tmp_path: Path) -> None:
    record, _ = await run_arm(tmp_path, "raw")
    states = realized_states(record, EP)
    for kind, status in (("premature", "blocked"), ("superseded_cue", "cancelled")):
        traps = find_traps(record, EP, (kind,), states=states)  # type: ignore[arg-type]
        assert traps and all(t.kind == kind for t in traps)
        assert all(states[t.position].status(t.step or "") == status for t in traps)


def test_strip_work_order() -> None:
    assert strip_work_order("Please do X ({}).".format("#W1234")) == "Please do X."
    assert strip_work_order("Work order #W1234: please get Y.") == "Please get Y."
    assert strip_work_order("Do Z under #W1234 now") == "Do Z under now"
    for t in EP.turns:
        if t.work_order:
            assert not _WO.search(strip_work_order(t.text)), t.text


# --- the tool harness (the paper's "with tools" rows) ------------------------------------


def _action(tool: str, wo: str) -> str:
    return "ACTION " + json.dumps({"tool": tool, "work_order": wo})


async def run_harness_arm(
    tmp: Path, arm: str, knobs: Knobs, ep: Episode = EP
) -> tuple[EpisodeRecord, Sent]:
    """A harness episode whose agent books the requested step's tool, and after every
    result or refusal books one more step (so turns have follow-ups, refusals and results
    carried into the next turn)."""

    def answer(messages: list[dict[str, str]], sent: int) -> str:
        last = messages[-1]["content"]
        m = _WO.search(last)
        wo = m.group(0) if m else None
        if wo is not None and last.startswith(("[TOOL RESULT]", "[CALL REJECTED]")):
            s = ep.steps[sent % len(ep.steps)]
            return f"Next.\n{_action(tool_name(s), wo)}"
        if wo is not None:
            step = next((t.step for t in ep.turns if t.text in last), None)
            if step is not None:
                return f"On it.\n{_action(tool_name(ep.step(step)), wo)}"
        return "Noted."

    return await _episode(tmp, arm, knobs, ep, answer)


HARNESS_CASES: list[tuple[str, Knobs]] = [
    ("raw", Knobs(harness="langgraph")),
    ("checklist", Knobs(harness="langgraph")),
    ("checklist", Knobs(harness="langgraph", checklist_mode="replace")),
    ("directive", Knobs(harness="langgraph")),
    ("directive", Knobs(harness="langgraph", directive_role="system")),
    ("enforce", Knobs(harness="langgraph")),
    ("enforce", Knobs(harness="langgraph", binding="request")),
]


@pytest.mark.parametrize(
    ("arm", "knobs"), HARNESS_CASES, ids=[f"{a}-{k!r}" for a, k in HARNESS_CASES]
)
async def test_rebuilt_harness_history_is_what_the_harness_sent(
    tmp_path: Path, arm: str, knobs: Knobs
) -> None:
    record, seen = await run_harness_arm(tmp_path, arm, knobs)
    first = 0
    for pos, t in enumerate(record.turns):
        assert rebuild_messages(record, EP, pos) == seen[first], (arm, pos)
        first += sum(c.role == "agent" for c in t.calls)
    assert first == len(seen) and len(record.turns) > 40
    calls = [c for t in record.turns for c in t.tool_calls]
    # the paths the rebuild must replay: follow-up replies after results, results carried
    # into the next turn (the follow-up limit), and for the gates refused calls
    assert any(t.follow_ups for t in record.turns)
    assert any(t.notices for t in record.turns)
    assert any(c.outcome == "executed" for c in calls)
    if arm == "enforce":
        refused = [c for c in calls if c.outcome == "refused"]
        assert refused and all(c.named is not None for c in refused)
        # a log from before ``named`` rebuilds the same (the notice names the call's step)
        old = msgspec.structs.replace(
            record,
            turns=tuple(
                msgspec.structs.replace(
                    t,
                    tool_calls=tuple(msgspec.structs.replace(c, named=None) for c in t.tool_calls),
                )
                for t in record.turns
            ),
        )
        last = len(record.turns) - 1
        assert rebuild_messages(old, EP, last) == rebuild_messages(record, EP, last)


async def test_harness_traps_and_variants(tmp_path: Path) -> None:
    record, _ = await run_harness_arm(tmp_path, "raw", Knobs(harness="langgraph"))
    states = realized_states(record, EP)
    traps = find_traps(record, EP, states=states)
    assert traps and all(t.recorded_rebooked for t in traps)  # it called the tool again
    for trap in traps:
        base = rebuild_messages(record, EP, trap.position)
        assert base[0]["content"].startswith(strings.BRIEF_OPENING)
        assert strings.TOOL_CLAUSE in base[0]["content"]
        last = len(base) - 1
        user_side: tuple[Variant, ...] = (
            "confirm",
            "status",
            "no_work_order",
            "checklist_user",
            "directive_user",
        )
        for v in user_side:
            m = variant_messages(record, EP, trap, v, states[trap.position])
            assert m is not None and _diff(base, m) == [last], v
        system_side: tuple[Variant, ...] = ("checklist_system", "directive_system")
        for v in system_side:
            m = variant_messages(record, EP, trap, v, states[trap.position])
            assert m is not None and _diff(base, m) == [0], v
        # the execution record of a tool call is also its result message: not rewritten
        unwritten: tuple[Variant, ...] = ("prose", "erased")
        for v in unwritten:
            assert variant_messages(record, EP, trap, v, states[trap.position]) is None
