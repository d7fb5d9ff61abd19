"""The agent's request bodies in a real run (#50): every body the episode runner's transcript
builds is the one :func:`runner.client.wire.chat_body` makes of the same arguments, across a
session restart with a handoff note, a same-turn re-prompt and a model whose brief goes in
the first user turn; the kept encodings are what most of each body is made of."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import runner.client.body as body_module
from runner.client.body import Transcript
from runner.client.wire import chat_body
from runner.grid.expand import parse_grid
from tests.reliability_kit import grid_data, records, run_inprocess


def test_every_agent_body_is_chat_bodys(tmp_path: Path, monkeypatch: Any) -> None:
    built: list[int] = []
    kept: list[int] = []
    own = Transcript.body

    def spy(self: Transcript, *args: Any) -> bytes:
        got = own(self, *args)
        assert got == chat_body(*args)
        built.append(len(args[1]))
        kept.append(len(self._sent))
        return got

    monkeypatch.setattr(body_module.Transcript, "body", spy)
    data = grid_data(seeds="100-101", steps=5, arms=("raw", "enforce"), timeout_s=60)
    data["models"] = [
        {"name": "scripted/synthetic", "endpoint": "embedded"},
        {"name": "scripted/perfect", "endpoint": "embedded", "brief_role": "user"},
    ]
    data["run"]["generator"] = 6
    data["run"]["variants"] = [
        {"arm": "raw", "sessions": 2, "handoff": "note"},
        {"arm": "enforce", "notice": "same_turn"},
    ]
    asyncio.run(run_inprocess(parse_grid(data), tmp_path / "run"))
    recs = records(tmp_path / "run")
    assert len(recs) == 2 * 2 * 4 and all(r.termination == "completed" for r in recs.values())
    agent_requests = sum(
        c.attempts for r in recs.values() for t in r.turns for c in t.calls if c.role == "agent"
    )
    assert len(built) == agent_requests  # every agent request went through the transcript
    # the history sent again each turn was kept, not encoded again
    assert sum(kept) > 0.8 * sum(max(0, n - 2) for n in built)
