"""The runner's lineage header (protocol.draws.LINEAGE_HEADER, issue #48): every agent request
of an episode run that restarts (the sessions knob) carries one token, its own; no two
episode runs share one; a helper's request carries none, nor an episode of one session (the
perfect agent's memory: serve.endpoint.lineage)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from protocol.draws import parse_lineage
from runner.grid.expand import parse_grid
from serve.agents.reading import Message
from serve.endpoint import lineage
from tests.reliability_kit import grid_data, records, run_inprocess


def test_each_episode_run_sends_one_token_of_its_own(tmp_path: Path, monkeypatch: Any) -> None:
    data = grid_data(seeds="100-101", arms=("raw", "enforce"), timeout_s=60)  # no retries
    data["models"] = [{"name": "scripted/perfect", "endpoint": "embedded"}]
    data["run"]["variants"] = [{"arm": "raw", "sessions": 2, "handoff": "note"}]
    data["run"]["generator"] = 6
    seen: list[tuple[str, tuple[Message, ...]]] = []

    def spy(token: str, model: str, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        seen.append((token, messages))
        return messages

    monkeypatch.setattr(lineage, "recall", spy)
    asyncio.run(run_inprocess(parse_grid(data), tmp_path / "run"))
    recs = records(tmp_path / "run")
    assert len(recs) == 2 * 3
    sessioned = [r for r in recs.values() if r.cell.knobs.sessions]
    agent_calls = sum(
        c.attempts for r in sessioned for t in r.turns for c in t.calls if c.role == "agent"
    )  # each attempt a request
    assert len(sessioned) == 2 and agent_calls > 2 * 44
    assert len(seen) == agent_calls  # every agent request of theirs, no helper's, no other's
    assert all(parse_lineage(token) == token for token, _ in seen)
    by_brief: dict[str, set[str]] = {}
    for token, messages in seen:
        by_brief.setdefault(token, set()).add(messages[0][1])
    assert len(by_brief) == len(sessioned)  # one token per episode run
    assert all(len(briefs) == 1 for briefs in by_brief.values())
