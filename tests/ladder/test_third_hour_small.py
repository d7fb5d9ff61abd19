"""The smaller items of #49 (item 7): the live contrast line says what it counts, episode
JSON rows carry their trial, and the README's generator number is the code's."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol.episode.versions import GENERATOR_VERSION, GENERATOR_VERSIONS
from protocol.records import CellKey
from runner.execution.live import _short
from scoring.report.tables import Labels
from scoring.results.lines import ContrastLine

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def test_the_readme_names_the_newest_generator() -> None:
    text = " ".join(README.read_text(encoding="utf-8").split())
    found = re.search(r"new runs use the newest, (\d+)\)", text)
    assert found is not None and int(found.group(1)) == GENERATOR_VERSION
    assert max(GENERATOR_VERSIONS) == GENERATOR_VERSION


def test_the_live_contrast_line_names_its_discordant_pairs() -> None:
    config = CellKey(model="m", steps=5, density=0.15, arm="")
    line = ContrastLine(
        config=config, a="raw", b="checklist", scoring="strict", n=12,
        a_successes=3, b_successes=7, b_only=6, a_only=2, p=0.29,
    )  # fmt: skip
    text = _short(line, Labels([config]))
    assert "b only 6, a only 2" in text and "disc" not in text
    assert len(text) <= 80


def test_episode_json_rows_carry_their_trial(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "--model", "scripted/perfect", "--arms", "raw", "--steps", "5"]
    args += ["--seeds", "100", "--trials", "2", "--temperature", "0.5", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--no-live"])
    assert result.exit_code == 0, result.output
    asyncio.set_event_loop_policy(None)
    listed = CliRunner().invoke(app, ["score", str(out), "--episodes", "--json"])
    rows = [orjson.loads(x) for x in listed.stdout.splitlines()]
    assert sorted((r["seed"], r["trial"]) for r in rows) == [(100, 0), (100, 1)]


def test_a_finished_rerun_appends_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "--model", "scripted/perfect", "--arms", "raw", "--steps", "5"]
    args += ["--seeds", "100-101", "--out", str(out), "--no-live"]
    assert CliRunner().invoke(app, args).exit_code == 0
    asyncio.set_event_loop_policy(None)
    before = (out / "results.jsonl").read_bytes()
    again = CliRunner().invoke(app, args)
    asyncio.set_event_loop_policy(None)
    assert again.exit_code == 0, again.output
    assert "already holds these final results (unchanged)" in again.stdout
    assert (out / "results.jsonl").read_bytes() == before
    more = CliRunner().invoke(app, [*args[:-5], "--seeds", "100-102", *args[-3:]])
    assert more.exit_code == 0 and "final results: " in more.stdout
    assert (out / "results.jsonl").read_bytes() != before
