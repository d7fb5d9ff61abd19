"""``ladder show`` and the viewer's turn view mark each session restart (the sessions knob,
issue #48): a line before the first turn of every session after the first, whether or not a
note was carried, and the carried note as a part of its own."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from ladder.app import app
from protocol.records import EpisodeRecord
from protocol.rule_strings import HANDOFF_CARRIED
from runner.execution.grid_run import run_async
from runner.grid.expand import parse_grid
from runner.rundir.records import load_records
from scoring.display.episode_views import episode_view
from scoring.display.sessions_view import session_mark
from scoring.replay.episode_score import score_episode


def _run(tmp: Path) -> list[EpisodeRecord]:
    grid = {
        "run": {
            "seeds": "100",
            "generator": 6,
            "graphs": [{"steps": 10, "density": 0.3}],
            "arms": ["raw"],
            "variants": [{"arm": "raw", "sessions": 3, "handoff": h} for h in ("none", "note")],
        },
        "models": [{"name": "scripted/perfect"}],
    }
    asyncio.run(run_async(parse_grid(grid), tmp, console=Console(file=io.StringIO()), live=False))
    records, _ = load_records(tmp)
    return records


def test_each_restart_is_marked_with_its_note(tmp_path: Path) -> None:
    records = _run(tmp_path)
    assert {r.cell.knobs.handoff for r in records if r.cell.knobs.sessions} == {"none", "note"}
    for r in records:
        view = episode_view(r, score_episode(r), None)
        opened = [t for t in r.turns if isinstance(t.session, int)]
        marked = [t for t in view.turns if t.session_mark is not None]
        assert [t.index for t in marked] == [t.index for t in opened]
        if not r.cell.knobs.sessions:
            assert not marked and {t.session for t in view.turns} == {1}
            continue
        handoff = r.cell.knobs.handoff
        assert [t.session_mark for t in marked] == [
            f"--- session {n} (handoff: {handoff}) ---" for n in (2, 3)
        ]
        assert [t.session for t in view.turns] == sorted(t.session for t in view.turns)
        assert {t.session for t in view.turns} == {1, 2, 3}
        for t in marked:
            if handoff == "note":
                assert t.carried and t.sent[0] == (
                    "carried",
                    HANDOFF_CARRIED.format(note=t.carried),
                )
                assert "".join(text for _, text in t.sent[1:]).strip() == t.user_text.strip()
            else:
                assert t.carried is None and all(kind != "carried" for kind, _ in t.sent)

    for r in records:
        if not r.cell.knobs.sessions:
            continue
        handoff = r.cell.knobs.handoff
        args = ["show", str(tmp_path), "--cell", r.cell.slug()]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        marks = [i for i, ln in enumerate(lines) if ln.startswith("--- session ")]
        assert [lines[i] for i in marks] == [
            f"--- session {n} (handoff: {handoff}) ---" for n in (2, 3)
        ]
        assert all(lines[i + 1].startswith(("-- turn ", "!! turn ")) for i in marks)
        carried = "handoff note carried from the previous session:"
        assert (result.stdout.count(carried) == 2) == (handoff == "note")
        assert handoff == "note" or carried not in result.stdout


def test_the_mark_names_the_other_model_on_its_sessions() -> None:
    assert session_mark(2, "note", "m2") == "--- session 2 (handoff: note; agent m2) ---"
    assert session_mark(3, "note", "m2") == "--- session 3 (handoff: note) ---"
