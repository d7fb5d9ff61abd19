"""The trap-turn probe across a session restart (the sessions knob, issue #48): the history it
rebuilds for a turn is that turn's session, from the session's first turn, whose message opens
with the carried note; byte for byte what the runner sent, so a re-ask sees what the agent saw."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol import EpisodeSpec, generate
from protocol.probe.history import realized_states, rebuild_messages, session_start
from protocol.probe.turns import find_traps, variant_messages
from protocol.records import Knobs
from protocol.rule_strings import HANDOFF_CARRIED, HANDOFF_REQUEST
from protocol.stress.sessions import sessioned
from tests.runner.probe.test_probe_history import run_arm, run_harness_arm

EP6 = generate(EpisodeSpec(seed=101, steps=10, density=0.3, generator=6))
SESSIONS = 3

CASES: list[tuple[str, Knobs]] = [
    (arm, Knobs(sessions=SESSIONS, handoff=handoff, **extra))  # type: ignore[arg-type]
    for arm, extra in (
        ("raw", {}),
        ("checklist", {"checklist_mode": "replace"}),
        ("ledger", {}),
        ("enforce", {}),
        ("memory-topk", {}),
    )
    for handoff in ("none", "note", "arm")
]


@pytest.mark.parametrize(("arm", "knobs"), CASES, ids=[f"{a}-{k!r}" for a, k in CASES])
async def test_the_rebuilt_history_is_the_turns_session(
    tmp_path: Path, arm: str, knobs: Knobs
) -> None:
    ep = sessioned(EP6, SESSIONS)
    assert len(ep.boundaries) == SESSIONS - 1
    record, seen = await run_arm(tmp_path, arm, knobs, ep)
    first = 0  # index in ``seen`` of each turn's first agent call
    opened = 0
    for pos, t in enumerate(record.turns):
        if isinstance(t.session, int):
            opened += 1
            assert session_start(record, pos) == pos
            if knobs.handoff == "note":  # the note call closes the session before it
                assert seen[first][-1]["content"] == HANDOFF_REQUEST
                first += 1
        rebuilt = rebuild_messages(record, ep, pos)
        assert rebuilt == seen[first], (arm, pos)
        start = session_start(record, pos)
        # the history holds the session's turns only: its first message opens the session
        assert len([m for m in rebuilt if m["role"] == "user"]) <= pos - start + 1
        if start and knobs.handoff == "note" and arm != "memory-topk":
            assert rebuilt[1]["content"].startswith(HANDOFF_CARRIED.split("{")[0])
        first += sum(c.role == "agent" for c in t.calls) - (
            isinstance(t.session, int) and knobs.handoff == "note"
        )
    assert opened == SESSIONS - 1
    assert first == len(seen) and len(record.turns) > 40


async def test_a_probe_after_a_restart_sees_no_earlier_session(tmp_path: Path) -> None:
    """A redo probe in a later session re-asks with the session's history: the booking line of
    the earlier session is not in it, so the variants that edit that line do not apply."""
    ep = sessioned(EP6, SESSIONS)
    knobs = Knobs(sessions=SESSIONS, handoff="none")
    record, _ = await run_arm(tmp_path, "raw", knobs, ep)
    states = realized_states(record, ep)
    late = [
        trap
        for trap in find_traps(record, ep)
        if session_start(record, trap.position) > 0
        and trap.booked_at is not None
        and session_start(record, trap.booked_at) < session_start(record, trap.position)
    ]
    assert late, "no redo probe fell in a later session than its step's execution"
    for trap in late:
        messages = variant_messages(record, ep, trap, "as_recorded", states[trap.position])
        assert messages is not None
        assert (
            record.turns[session_start(record, trap.position)].sent_text == messages[1]["content"]
        )
        assert variant_messages(record, ep, trap, "erased", states[trap.position]) is None


HARNESS_CASES: list[tuple[str, Knobs]] = [
    (arm, Knobs(harness="langgraph", sessions=SESSIONS, handoff=handoff))
    for arm in ("raw", "checklist", "enforce")
    for handoff in ("none", "note")
]


@pytest.mark.parametrize(
    ("arm", "knobs"), HARNESS_CASES, ids=[f"{a}-{k.handoff}" for a, k in HARNESS_CASES]
)
async def test_the_tool_harness_restarts_and_its_history_rebuilds(
    tmp_path: Path, arm: str, knobs: Knobs
) -> None:
    """The tool harness restarts at a session boundary as the text protocol does: the note
    call closes the session, the next request holds the brief and the session's first message
    alone; the probe rebuilds every turn byte for byte, follow-ups included."""
    ep = sessioned(EP6, SESSIONS)
    record, seen = await run_harness_arm(tmp_path, arm, knobs, ep)
    first = 0
    opened = [t.index for t in record.turns if isinstance(t.session, int)]
    assert opened == list(ep.boundaries)
    for pos, t in enumerate(record.turns):
        note = isinstance(t.session, int) and knobs.handoff == "note"
        if note:
            assert seen[first][-1]["content"] == HANDOFF_REQUEST
            assert isinstance(t.carried, str)
            assert t.sent_text.startswith(HANDOFF_CARRIED.format(note=t.carried))
            first += 1
        if isinstance(t.session, int):
            assert len(seen[first]) == 2  # the brief and the session's first message
        assert rebuild_messages(record, ep, pos) == seen[first], (arm, pos)
        first += sum(c.role == "agent" for c in t.calls) - note
    assert first == len(seen)
    assert any(t.follow_ups for t in record.turns)
