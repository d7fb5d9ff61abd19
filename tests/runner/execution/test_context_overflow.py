"""A context overflow is the model's failure on its arm (#40, item 2): counted in n as a
failure under both scorings, in its own column, never retried on resume, with the server's
numbers kept in the record's error."""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec
import pytest

from protocol.records import EpisodeRecord
from runner.rundir.logs import read_logs
from scoring.replay.episode_score import score_episode
from scoring.report.tables import ladder_table
from scoring.results.families import score_lines
from scoring.results.lines import CellLine
from serve.config import ServerConfig
from tests.reliability_kit import make_grid, run_inprocess

# S=5 on the perfect agent: raw's largest prompt is about 1,800 tokens, checklist's about
# 2,600 by turn 30 and 4,100 at the end; with a 400-token reply budget a 3,000-token context
# holds every raw episode and no checklist episode.
MAX_MODEL_LEN = 3000


@pytest.fixture(scope="module")
def overflowed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    out = tmp_path_factory.mktemp("overflow") / "run"
    grid = make_grid(
        seeds="100-103",
        arms=("raw", "checklist"),
        models=[{"name": "scripted/perfect", "endpoint": "embedded"}],
    )
    config = ServerConfig(max_model_len=MAX_MODEL_LEN, shutdown_timeout_s=0.1)
    summary, _ = asyncio.run(run_inprocess(grid, out, config))
    again, _ = asyncio.run(run_inprocess(grid, out, config))
    return out, {"first": summary, "resume": again}


def test_the_overflow_is_counted_as_the_arms_failure(
    overflowed: tuple[Path, dict[str, object]],
) -> None:
    out, summaries = overflowed
    first = summaries["first"]
    assert isinstance(first, dict)
    assert first["model_failures"] == 4 and first["infrastructure"] == 0
    records = read_logs(out)
    over = [r for r in records.values() if r.termination == "context_overflow"]
    assert len(over) == 4 and {r.cell.arm for r in over} == {"checklist"}
    for r in over:  # the server's numbers are kept
        assert f"maximum context length is {MAX_MODEL_LEN} tokens" in (r.error or "")
        score = score_episode(r)
        assert score.counted and score.model_failure and not score.infrastructure
        assert not score.primary.success and not score.decline_aware.success
        assert not score.mismatches  # ended early on purpose: no "turns left" mismatch
    lines = score_lines(score_episode(r) for r in records.values())
    cells = {x.cell.arm: x for x in lines if isinstance(x, CellLine)}
    assert (cells["checklist"].n, cells["checklist"].context_overflows) == (4, 4)
    assert cells["checklist"].strict_successes == cells["checklist"].decline_aware_successes == 0
    assert cells["checklist"].infrastructure_errors == 0
    assert (cells["raw"].n, cells["raw"].context_overflows, cells["raw"].strict) == (4, 0, 1.0)
    for scoring in ("strict", "decline_aware"):
        table = ladder_table(lines, scoring)
        assert "overflow" in table.splitlines()[1]
        row = next(x for x in table.splitlines() if " checklist " in x)
        assert row.split()[-2:] == ["4", "0"]  # overflow 4, infra 0


def test_a_resume_never_reruns_an_overflow(overflowed: tuple[Path, dict[str, object]]) -> None:
    _, summaries = overflowed
    again = summaries["resume"]
    assert isinstance(again, dict)
    assert (again["episodes_run"], again["already_done"]) == (0, 8)


def test_old_infrastructure_terminations_stay_out_of_n() -> None:
    path = Path(__file__).resolve().parents[2] / "data" / "demo_logs.jsonl"
    record = msgspec.json.decode(path.read_bytes().splitlines()[0], type=EpisodeRecord)
    for termination in ("endpoint_error", "timeout", "client_error", "cancelled"):
        failed = msgspec.structs.replace(record, termination=termination)
        score = score_episode(failed)
        assert score.infrastructure and not score.counted and not score.model_failure
