"""The brief reached the model (issue #41): the first agent call of each model checks that
the server's prompt tokens cover the brief; a template that drops the system message (the
scripted endpoint's ``drop_system=1``) stops the run with one line naming the fix, and the
grid's ``brief_role = "user"`` sends the brief in the first user turn instead."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol import generate
from runner.execution.brief_check import CHARS_PER_TOKEN_BOUND, brief_lost, placed
from runner.grid.expand import parse_grid
from scoring.replay.episode_score import score_episode
from tests.reliability_kit import grid_data, grid_toml, records, run_inprocess

BRIEF = "You are the project assistant. " * 40  # 1,240 characters: at least 155 tokens


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def test_the_reported_prompt_tokens_must_cover_the_brief() -> None:
    messages = [{"role": "system", "content": BRIEF}, {"role": "user", "content": "hi"}]
    assert brief_lost("m", messages, 300, BRIEF) is None
    assert brief_lost("m", messages, 155, BRIEF) is None  # the floor itself passes
    assert brief_lost("m", messages, 0, BRIEF) is None  # no usage reported: not checkable
    line = brief_lost("m", messages, 20, BRIEF)
    assert line is not None and "\n" not in line
    assert "reported 20 prompt tokens" in line and "system message" in line
    assert 'brief_role = "user"' in line and "system role" in line


def test_brief_role_user_moves_the_brief_into_the_first_user_turn() -> None:
    messages = [
        {"role": "system", "content": "BRIEF"},
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "two"},
    ]
    assert placed(messages, "system") == messages
    assert placed(messages, "user") == [
        {"role": "user", "content": "BRIEF\n\none"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "two"},
    ]
    assert placed([{"role": "system", "content": "B"}], "user") == [
        {"role": "user", "content": "B"}
    ]


def _grid(model: str, **extra: str) -> dict[str, object]:
    data = grid_data(
        seeds="100-101",
        arms=("raw", "checklist", "enforce"),
        models=[{"name": model, "endpoint": "embedded", **extra}],
    )
    data["decoding"]["timeout_s"] = 30
    return data


def test_a_dropped_system_message_stops_the_run_with_one_line(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(grid_toml(_grid("scripted/perfect?drop_system=1")))
    result = CliRunner().invoke(
        app, ["run", str(grid), "--out", str(tmp_path / "run"), "--no-live"]
    )
    assert result.exit_code == 3, result.output
    lines = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert lines and all(len(x) <= 80 for x in lines), lines  # one error, wrapped (#49)
    error = " ".join(x.removeprefix("error:").strip() for x in lines)
    assert "the brief did not reach the model" in error
    assert "Traceback" not in result.output
    assert not any(r.termination == "completed" for r in records(tmp_path / "run").values())


def test_the_brief_in_the_first_user_turn_reaches_a_template_without_system(
    tmp_path: Path,
) -> None:
    """The run goes on, the prompt the server counted holds the brief, and the perfect agent,
    which reads the brief at the head of its first user turn, scores 1.0 in every arm."""
    data = _grid("scripted/perfect?drop_system=1", brief_role="user")
    out = tmp_path / "run"
    asyncio.run(run_inprocess(parse_grid(data, source="test"), out))
    recs = records(out).values()
    assert len(recs) == 6
    for r in recs:
        assert r.termination == "completed"
        first = r.turns[0].calls[0]
        brief = generate(r.spec).brief
        assert first.prompt_tokens >= len(brief) // CHARS_PER_TOKEN_BOUND  # brief counted
        assert score_episode(r).primary.success, r.cell.arm
    dropped = _grid("scripted/perfect?drop_system=1")
    with pytest.raises(BaseExceptionGroup):  # the same server without the option: stopped
        asyncio.run(run_inprocess(parse_grid(dropped, source="test"), tmp_path / "other"))
