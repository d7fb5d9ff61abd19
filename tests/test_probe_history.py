"""The trap-turn probe's pure core (protocol.probe): the rebuilt history is byte-identical to
what the runner sent for every turn of every arm, and each variant changes exactly the one
thing it names."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

from protocol import EpisodeSpec, generate, strings
from protocol.arms import MEMORY_ARMS
from protocol.domains import POOLS
from protocol.probe import (
    VARIANTS,
    find_traps,
    realized_states,
    rebuild_messages,
    strip_work_order,
    variant_messages,
)
from protocol.receipts import find_refs
from protocol.records import CallRecord, CellKey, Episode, EpisodeRecord, Knobs
from protocol.render import render_checklist, render_directive
from runner.arms.base import EpisodeContext
from runner.client import Reply
from runner.episode import run_episode
from runner.grid import parse_grid
from runner.helpers import Helpers
from tests.gates_fakes import FakeChat, truth

EP = generate(EpisodeSpec(seed=101, steps=10, density=0.3))
DEFAULT = Knobs()
_WO = re.compile(r"#W\d{4}")


def _book_requested(ep: Episode, user: str, wo: str | None) -> str:
    """Books whatever the message names (so redo probes are re-executed)."""
    step = next((t.step for t in ep.turns if t.text in user), None)
    if step is None:
        step = next((s.id for s in ep.steps if s.text in user), None)
    if step is None or wo is None:
        return "Noted."
    return f"On it.\nref {ep.step(step).code}/{wo}\nLEDGER {ep.step(step).code} DONE"


class _Embedding(FakeChat):
    """FakeChat plus the embeddings call the memory arms make (hash vectors)."""

    async def embed(self, model: str, texts: list[str], **_: Any) -> tuple[Any, CallRecord]:
        rows = [[b / 255 for b in hashlib.sha256(t.encode()).digest()[:16]] for t in texts]
        return rows, CallRecord(role="embedding")


def _grid() -> Any:
    return parse_grid({"models": [{"name": "m"}]})


async def run_arm(
    tmp: Path, arm: str, knobs: Knobs = DEFAULT, ep: Episode = EP
) -> tuple[EpisodeRecord, list[list[dict[str, str]]]]:
    seen: list[list[dict[str, str]]] = []

    async def agent(messages: list[dict[str, str]]) -> Reply:
        seen.append([dict(m) for m in messages])
        user = messages[-1]["content"]
        m = _WO.search(user)
        content = _book_requested(ep, user, m.group(0) if m else None)
        return Reply(content=content, reasoning="", call=CallRecord(role="agent"))

    cell = CellKey(model="m", steps=ep.spec.steps, density=ep.spec.density, arm=arm, knobs=knobs)
    helpers = Helpers(_grid(), tmp, {"embedded": _Embedding(truth({ep.brief: ep}))})
    ctx = EpisodeContext(episode=ep, cell=cell, agent=agent, helpers=helpers)
    record = await run_episode(ctx)
    assert record.termination == "completed", record.error
    return record, seen


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


# the tools knob: prose / erased rewrite ref lines only (docs/probe.md); its ACTION bookings
# are not rewritten, so it is not in the variant cases
VARIANT_CASES = [
    (a, k)
    for a, k in CASES
    if not (a == "memory-topk" and k.memory_mode == "record") and not k.tools
]


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
    assert arm in MEMORY_ARMS or all(t.recorded_rebooked for t in traps)
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
        prose, erased = got["prose"], got["erased"]
        assert prose is not None and erased is not None
        assert (
            strings.PROBE_PROSE_BOOKING.format(
                id=step.id,
                text=step.text,
                wo=record.turns[trap.booked_at or 0].work_order,
                code=step.code,
            )
            in prose[booked]["content"]
        )
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
