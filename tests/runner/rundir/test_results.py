"""Results a researcher can query: ``ladder cost`` rows, per-episode rows, record totals, and
``results.jsonl`` streamed (provisional) then final, on real runs against the embedded
scripted endpoint."""

from __future__ import annotations

import asyncio
import io
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest
from rich.console import Console
from typer.testing import CliRunner

import runner.execution.grid_run as cmd_run
from ladder.app import app
from protocol.arms.table import arm_names
from protocol.records import EpisodeRecord, episode_id
from protocol.state.compiled import MATCHER_BYPASS
from runner.execution.grid_run import run_async
from runner.grid.expand import Grid, parse_grid
from runner.rundir.logs import read_logs
from runner.rundir.results import RESULTS, read_results
from scoring.analyses.cost import CostRow, cost_rows, quantile
from scoring.results.cells import config_of
from scoring.results.flat import CELL_FIELDS
from scoring.results.lines import (
    CellLine,
    ContrastLine,
    HelperLine,
    current_lines,
    decode_line,
    line_key,
)

GATES = ("directive", "enforce", "hybrid")
ARMS = ("raw", "checklist", *GATES)
cli = CliRunner()


def _grid(arms: tuple[str, ...], seeds: str, domains: list[str], briefs: list[str]) -> Grid:
    return parse_grid(
        {
            "run": {
                "seeds": seeds,
                "graphs": [{"steps": 10, "density": 0.15}],
                "domains": domains,
                "briefs": briefs,
                "arms": list(arms),
                "concurrency": 32,
            },
            "endpoints": [{"name": "embedded", "base_url": "embedded", "max_in_flight": 16}],
            "models": [
                {"name": "scripted/synthetic?obey=0.9&fresh=0.35&seed=7", "endpoint": "embedded"}
            ],
        }
    )


def _run(grid: Grid, out: Path, **kw: Any) -> None:
    console = Console(file=io.StringIO())
    asyncio.run(run_async(grid, out, console=console, live=False, **kw))


GRID = _grid(ARMS, "100-101", ["procurement", "release"], ["amended", "original"])


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("grid")
    _run(GRID, out)
    return out


@pytest.fixture(scope="module")
def records(run_dir: Path) -> list[EpisodeRecord]:
    return list(read_logs(run_dir).values())


@pytest.fixture(scope="module")
def rows(records: list[EpisodeRecord]) -> list[CostRow]:
    return cost_rows(records)


# --- ladder cost ----------------------------------------------------------------------------


def test_cost_rows_of_a_two_domain_two_brief_grid_are_distinct_and_complete(
    run_dir: Path, rows: list[CostRow]
) -> None:
    assert len(rows) == len(GRID.cells()) == 4 * len(ARMS)
    assert {r.cell for r in rows} == set(GRID.cells())
    assert len({r.slug for r in rows}) == len(rows)
    assert all(r.n == 2 and r.agent_calls >= 44 for r in rows)
    configs: dict[object, list[str]] = {}
    for r in rows:
        configs.setdefault(config_of(r.cell), []).append(r.cell.arm)
    assert len(configs) == 4
    assert all(arms == [a for a in arm_names() if a in ARMS] for arms in configs.values())
    assert all(r.x_raw is not None for r in rows)
    assert [r.x_raw for r in rows if r.cell.arm == "raw"] == [1.0] * 4

    result = cli.invoke(app, ["cost", str(run_dir), "--json"])
    assert result.exit_code == 0, result.output
    lines = [orjson.loads(x) for x in result.stdout.splitlines()]
    assert len(lines) == len(rows) and all(x["type"] == "cost" for x in lines)
    assert all(set(CELL_FIELDS) <= x.keys() for x in lines)  # flat: every cell-key field
    assert len({tuple(x[f] for f in CELL_FIELDS) for x in lines}) == len(rows)
    assert [x["slug"] for x in lines] == [r.slug for r in rows]
    assert lines[0]["wall_s_p95"] >= lines[0]["wall_s_p50"] > 0  # flat: no nested objects
    assert not any(isinstance(v, dict | list) for x in lines for v in x.values())

    text = cli.invoke(app, ["cost", str(run_dir), "--wide"]).stdout  # headings in full
    headings = [x for x in text.splitlines() if x.startswith("Cost per episode:")]
    assert len(headings) == len(set(headings)) == 4
    for domain in ("procurement", "release"):
        for brief in ("amended", "original"):
            assert sum(f"{domain} {brief}" in h for h in headings) == 1


def _consulting_turns(record: EpisodeRecord) -> int:
    return sum(t.kind not in MATCHER_BYPASS for t in record.turns)


def test_each_gate_arm_requires_one_matcher_call_per_consulting_turn(
    records: list[EpisodeRecord], rows: list[CostRow]
) -> None:
    by_cell: dict[object, list[EpisodeRecord]] = {}
    for r in records:
        by_cell.setdefault(r.cell, []).append(r)
    served_only = 0
    for row in rows:
        recs = by_cell[row.cell]
        if row.cell.arm not in GATES:
            assert row.matcher_required == row.compiler_required == 0
            continue
        expected = sum(map(_consulting_turns, recs)) / len(recs)
        assert expected > 0
        assert row.matcher_required == pytest.approx(expected)
        assert row.matcher_made + row.matcher_cached >= row.matcher_required
        assert row.compiler_required == 2.0  # graph and revision, made or served
        served_only += row.matcher_made == 0
    # The gate arms of one seed share each matcher answer: some arm was served every one of
    # them, and still requires its consulting turns (they differ between arms only by the
    # re-asks each arm's own omissions caused).
    assert served_only > 0


def test_required_helper_calls_do_not_move_when_the_disk_cache_serves_them_all(
    run_dir: Path, rows: list[CostRow], tmp_path: Path
) -> None:
    shutil.copytree(run_dir / "cache", tmp_path / "cache")
    gates = _grid(GATES, "100-101", ["procurement"], ["amended"])
    _run(gates, tmp_path)
    again = cost_rows(read_logs(tmp_path).values())
    before = {r.cell: r for r in rows}
    assert len(again) == len(GATES)
    for row in again:
        assert row.matcher_made == row.compiler_made == row.helper_tokens_made == 0  # served
        # what the arm needs does not move either: the cache keeps the tokens of its calls
        assert row.helper_tokens > 0
        assert row.helper_tokens == pytest.approx(before[row.cell].helper_tokens)
        assert row.matcher_required == before[row.cell].matcher_required > 0
        assert row.compiler_required == before[row.cell].compiler_required == 2.0


def test_quantiles_interpolate_between_order_statistics() -> None:
    assert quantile([], 0.5) == 0.0
    assert quantile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert quantile([0.0, 10.0], 0.95) == pytest.approx(9.5)
    assert quantile([5.0], 0.99) == 5.0


# --- records ------------------------------------------------------------------------------


def test_records_carry_slug_episode_id_and_totals(
    run_dir: Path, records: list[EpisodeRecord]
) -> None:
    for r in records:
        assert r.slug == r.cell.slug() and (run_dir / "logs" / f"{r.slug}.jsonl").is_file()
        assert r.episode_id == episode_id(r.cell, r.seed) == f"{r.slug}/{r.seed}"
        assert r.arm == r.cell.arm
        agent = [c for t in r.turns for c in t.calls if c.role == "agent"]
        assert r.agent_calls == len(agent) >= 44
        assert r.prompt_tokens == sum(c.prompt_tokens for c in agent) > 0
        assert r.agent_tokens == r.prompt_tokens + r.completion_tokens
        helpers = [c for t in r.turns for c in t.calls if c.role != "agent"]
        assert r.helper_calls + r.helper_cached == len(helpers)
        assert (r.helper_calls + r.helper_cached > 0) == (r.arm in GATES)
    assert len({r.episode_id for r in records}) == len(records)


# --- ladder score --episodes --------------------------------------------------------------


def test_score_episodes_rows_add_up_to_the_cell_lines(
    run_dir: Path, records: list[EpisodeRecord]
) -> None:
    result = cli.invoke(app, ["score", str(run_dir), "--episodes", "--json"])
    assert result.exit_code == 0, result.output
    rows = [orjson.loads(x) for x in result.stdout.splitlines()]
    assert len(rows) == len(records) and all(x["type"] == "episode" for x in rows)
    assert {x["episode_id"] for x in rows} == {r.episode_id for r in records}
    assert all(set(CELL_FIELDS) <= x.keys() for x in rows)
    cells = {x.slug: x for x in read_results(run_dir) if isinstance(x, CellLine)}
    for slug, line in cells.items():
        mine = [x for x in rows if x["slug"] == slug and x["counted"]]
        assert len(mine) == line.n
        assert sum(x["strict"] for x in mine) == line.strict_successes
        assert sum(x["decline_aware"] for x in mine) == line.decline_aware_successes
        assert sum(x["re_execution"] for x in mine) == line.channels["re_execution"]
    for x in rows:
        assert (x["first_failing_turn"] is None) == (x["errors"] == 0)
        assert (x["first_failing_channel"] is None) == (x["errors"] == 0)
        assert x["strict"] == (x["errors"] == 0)  # every episode here completed
    text = cli.invoke(app, ["score", str(run_dir), "--episodes"]).stdout
    assert sum(x.startswith("Episodes:") for x in text.splitlines()) == 4


# --- results.jsonl: provisional, then final -----------------------------------------------


def _statuses(out: Path) -> list[tuple[str, str]]:
    lines = [orjson.loads(x) for x in (out / RESULTS).read_bytes().splitlines()]
    return [(x["type"], x["status"]) for x in lines]


def _score_json(out: Path) -> list[bytes]:
    result = cli.invoke(app, ["score", str(out), "--json"])
    assert result.exit_code == 0, result.output
    return [x.encode() for x in result.stdout.splitlines()]


def test_streamed_lines_are_provisional_then_the_run_appends_final_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = _grid(("raw", "checklist", "directive"), "100-102", ["procurement"], ["amended"])
    # A run that never reaches its end (killed): only the streamed, provisional lines.
    with monkeypatch.context() as m:
        m.setattr(cmd_run, "_finalize", lambda out, grid, console, **_: 0)
        _run(small, tmp_path)
    streamed = _statuses(tmp_path)
    assert streamed and {s for _, s in streamed} == {"provisional"}
    current = read_results(tmp_path)  # no final line yet: the last provisional per key
    assert Counter(type(x).__name__ for x in current) == {"CellLine": 3, "ContrastLine": 4}

    # Resuming it (nothing left to run) ends the run: earlier lines superseded, final appended.
    _run(small, tmp_path)
    statuses = _statuses(tmp_path)
    assert statuses[: len(streamed)] == [(t, "superseded") for t, _ in streamed]
    final = (tmp_path / RESULTS).read_bytes().splitlines()[len(streamed) :]
    assert final == _score_json(tmp_path)  # the final lines are `ladder score --json`
    assert all(decode_line(x).status == "final" for x in final)
    assert any(isinstance(decode_line(x), HelperLine) for x in final)

    # A grid change (one more seed): one final line per cell again, n never double counted.
    bigger = _grid(("raw", "checklist", "directive"), "100-103", ["procurement"], ["amended"])
    _run(bigger, tmp_path, allow_change=True)
    lines = [decode_line(x) for x in (tmp_path / RESULTS).read_bytes().splitlines()]
    finals = [x for x in lines if x.status == "final"]
    cells = [x for x in finals if isinstance(x, CellLine)]
    assert len(cells) == 3 and sum(c.n for c in cells) == 12
    assert sum(isinstance(x, ContrastLine) for x in finals) == 4
    assert all(x.status == "superseded" for x in lines[: len(lines) - len(finals)])
    assert read_results(tmp_path) == finals
    assert (tmp_path / RESULTS).read_bytes().splitlines()[-len(finals) :] == _score_json(tmp_path)


def test_result_lines_written_before_the_status_still_read(run_dir: Path) -> None:
    lines = (run_dir / RESULTS).read_bytes().splitlines()
    old = []
    for raw in lines:
        data = orjson.loads(raw)
        del data["status"]  # as the runner wrote them before the status existed
        if data["type"] == "contrast":
            assert "arm" not in data["config"]  # a configuration is written without its arm
        old.append(orjson.dumps(data))
    decoded = [decode_line(x) for x in old]
    assert all(x.status == "provisional" for x in decoded)
    assert [msgspec.structs.replace(x, status="final") for x in decoded[-5:]] == [
        decode_line(x) for x in lines[-5:]
    ]
    # With no final line the last provisional line of each cell and contrast is current.
    assert len(current_lines(decoded)) == len({line_key(x) for x in decoded})
