"""End-to-end: the runner against the scripted endpoint on loopback."""

from __future__ import annotations

import gc
import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from ladder.app import app
from runner.execution.grid_run import run_async
from runner.grid.expand import parse_grid
from runner.rundir.logs import read_logs
from runner.rundir.results import read_results
from scoring.replay.episode_score import score_episode
from scoring.results.lines import line_json


def _grid(model: str, arms: list[str], seeds: str = "100-115", **run: Any) -> dict[str, Any]:
    cap = run.pop("max_in_flight", 32)
    return {
        "run": {
            "seeds": seeds,
            "graphs": [{"steps": 10, "density": 0.15}],
            "arms": arms,
            "concurrency": run.pop("concurrency", 64),
            **run,
        },
        "endpoints": [{"name": "embedded", "base_url": "embedded", "max_in_flight": cap}],
        "models": [{"name": model, "endpoint": "embedded"}],
    }


async def _run(tmp: Path, data: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[Any, Any]]:
    grid = parse_grid(data)
    lines: list[dict[str, Any]] = []
    console = Console(file=io.StringIO())
    await run_async(grid, tmp, console=console, live=False)
    lines = [line_json(x) for x in read_results(tmp)]  # the run's final lines
    assert lines and all(x["status"] == "final" for x in lines)
    return lines, read_logs(tmp)


async def test_perfect_agent_scores_one_in_every_text_arm(tmp_path: Path) -> None:
    lines, records = await _run(tmp_path, _grid("scripted/perfect", ["raw", "checklist"]))
    cells = [x for x in lines if x["type"] == "cell"]
    assert len(cells) == 2 and all(c["strict"] == 1.0 and c["n"] == 16 for c in cells)
    assert len(records) == 32
    # The logs rescore offline to the live results.
    for rec in records.values():
        assert rec.termination == "completed" and len(rec.turns) >= 44
        score = score_episode(rec)
        assert score.primary.success and score.decline_aware.success and score.admitted_diffs == 0


async def test_tools_knob_brief_asks_for_the_action_lines_it_scores(tmp_path: Path) -> None:
    """A ``tools`` cell scores ACTION lines only, so its brief must carry each step's tool
    and the tool clause (before the fix it sent the plain brief: every booking a ref line
    the cell does not read, strict 0)."""
    data = _grid("scripted/perfect", [], seeds="100-103")
    data["run"]["variants"] = [{"arm": a, "tools": True} for a in ("raw", "checklist", "ledger")]
    lines, records = await _run(tmp_path, data)
    cells = [x for x in lines if x["type"] == "cell"]
    assert len(cells) == 3 and all(c["strict"] == 1.0 for c in cells), cells
    for rec in records.values():
        booked = [t for t in rec.turns if t.admitted]
        assert booked and all("ACTION" in t.reply and "ref RC-" not in t.reply for t in booked)


async def test_always_book_fails_the_redo_probes_in_the_raw_arm(tmp_path: Path) -> None:
    lines, records = await _run(tmp_path, _grid("scripted/always-book", ["raw"]))
    (cell,) = [x for x in lines if x["type"] == "cell"]
    assert cell["strict"] == 0.0
    assert cell["channels"]["re_execution"] >= 2 * 16  # two redo probes per episode
    for rec in records.values():
        probes = [t for t in rec.turns if t.kind == "redo_probe"]
        assert len(probes) == 2 and all(t.admitted for t in probes)


async def test_replace_mode_checklist_shows_only_the_current_turn(tmp_path: Path) -> None:
    data = _grid("scripted/perfect", ["raw"], seeds="100-103")
    data["run"]["variants"] = [{"arm": "checklist", "checklist_mode": "replace"}]
    lines, records = await _run(tmp_path, data)
    cells = [x for x in lines if x["type"] == "cell"]
    assert {c["cell"]["arm"] for c in cells} == {"raw", "checklist"}
    assert all(c["strict"] == 1.0 for c in cells)
    rec = next(r for r in records.values() if r.cell.arm == "checklist")
    assert all("[PROJECT CHECKLIST" in t.sent_text for t in rec.turns)


async def test_512_concurrent_episodes_never_exceed_the_cap(tmp_path: Path) -> None:
    from runner.execution import connect as eps

    peaks: list[int] = []
    tails: list[object] = []  # the limiters' tail rule, after the run (#50)
    original = eps.open_endpoints
    collector = gc.get_threshold(), gc.get_freeze_count()

    def spy(*a: Any, **k: Any) -> Any:
        cm = original(*a, **k)

        class Wrap:
            async def __aenter__(self) -> Any:
                self.e = await cm.__aenter__()
                return self.e

            async def __aexit__(self, *exc: Any) -> Any:
                peaks.extend(x.limiter.peak for x in self.e.values())
                tails.extend(x.limiter.tail for x in self.e.values())
                return await cm.__aexit__(*exc)

        return Wrap()

    eps.open_endpoints = spy
    try:
        data = _grid(
            "scripted/perfect",
            ["raw", "checklist"],
            seeds="100-355",
            concurrency=512,
            max_in_flight=48,
        )
        lines, records = await _run(tmp_path, data)
    finally:
        eps.open_endpoints = original
    assert len(records) == 512
    assert peaks and max(peaks) <= 48
    # the run's scoped settings undone: the tail rule, the collector (serve.collector)
    assert tails and all(t is None for t in tails)
    assert (gc.get_threshold(), gc.get_freeze_count()) == collector
    assert all(x["strict"] == 1.0 for x in lines if x["type"] == "cell")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--arms", "raw,bogus"], "unknown arm 'bogus'"),
        (["--base-url", "http://127.0.0.1:9/v1"], "connection error"),
        (["--model", "scripted/nonexistent"], "scripted/nonexistent"),
        (["--api-key-env", "STATE_LADDER_NO_SUCH_KEY"], "STATE_LADDER_NO_SUCH_KEY"),
    ],
)
def test_bad_input_fails_before_any_episode(tmp_path: Path, args: list[str], needle: str) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["run", "--out", str(out), "--seeds", "100-101", "--no-live", *args]
    )
    assert result.exit_code == 2, result.output
    assert needle in result.output
    assert "Traceback" not in result.output
    assert not (out / "logs").exists() or not any((out / "logs").iterdir())


async def test_score_reports_compile_accuracy_and_matcher_agreement(tmp_path: Path) -> None:
    await _run(tmp_path, _grid("scripted/perfect", ["raw", "directive"], seeds="100-103"))
    result = CliRunner().invoke(app, ["score", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    import orjson

    lines = [orjson.loads(x) for x in result.stdout.splitlines() if x.startswith("{")]
    (helpers,) = [x for x in lines if x["type"] == "helpers"]
    assert helpers["cell"]["arm"] == "directive"
    assert helpers["compile"]["n"] == 4 and helpers["compile"]["dep"] == 1.0
    assert helpers["matcher"]["agreement"] == 1.0 and helpers["matcher"]["redo_recall"] == 1.0
    text = CliRunner().invoke(app, ["score", str(tmp_path)]).output
    assert "Gate helpers" in text
