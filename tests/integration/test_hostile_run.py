"""A grid run against every mode of the hostile loopback endpoint (#36): the run ends
normally, every record it wrote is readable by the log reader and rescores, hostile replies
are infrastructure errors or non-replies (never an agent's omission), and nothing escapes.
The subprocess cases check what a user sees: exit 0 or a one-line error, no traceback."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol.records import NO_REPLY, CallRecord, EpisodeRecord, TurnRecord
from runner.grid.expand import parse_grid
from runner.rundir.logs import LogReport, LogWriter, UnreadableRecord, read_logs
from scoring.results.lines import CellLine
from scoring.results.offline import rescore
from tests.hostile_server import MODES, hostile_endpoint
from tests.reliability_kit import grid_data, grid_toml, run_inprocess
from tests.scoring_records import build, cell, episode, perfect

EXPECTED: dict[str, set[str]] = {
    "content_parts": {"completed"},
    "escapes": {"completed"},
    "deep_json": {"completed"},
    "action_flood": {"completed"},
    "content_null": {"empty_reply"},
    "content_empty": {"empty_reply"},
    "content_filter": {"content_filter"},
    "redirect_file": {"client_error"},
    "redirect_loop": {"client_error"},
    "error_escapes": {"client_error"},
    "error_string": {"client_error"},
    "error_list": {"client_error"},
}


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def _grid(url: str, arms: tuple[str, ...] = ("raw", "enforce")) -> dict[str, Any]:
    data = grid_data(seeds="100", steps=5, arms=arms, attempts=2, timeout_s=20)
    data["endpoints"][0]["base_url"] = url
    data["endpoints"][0]["name"] = "hostile"
    data["models"] = [{"name": "m", "endpoint": "hostile"}]
    return data


def _readable(out: Path) -> dict[tuple[str, int], EpisodeRecord]:
    report = LogReport()
    records = read_logs(out, report)
    assert not report.corrupt and not report.truncated, report.corrupt
    assert rescore(records.values()), "the run's records rescore"
    return records


@pytest.mark.parametrize("mode", MODES)
async def test_a_grid_survives_the_hostile_endpoint(mode: str, tmp_path: Path) -> None:
    async with hostile_endpoint() as url:
        grid = parse_grid(_grid(url(mode)))
        summary, console = await run_inprocess(grid, tmp_path / "run", check=False)
    records = _readable(tmp_path / "run")
    assert len(records) == 2, summary
    ends = {r.termination for r in records.values()}
    assert ends <= EXPECTED.get(mode, {"endpoint_error"}), (mode, ends)
    assert "\x1b" not in console
    lines = rescore(records.values())
    cells = [x for x in lines if isinstance(x, CellLine)]  # the only line with no_reply
    if ends <= NO_REPLY:
        assert sum(c.no_reply for c in cells) == 2
        assert all(c.infrastructure_errors == 0 for c in cells)


def test_the_log_writer_refuses_a_record_the_reader_would_reject(tmp_path: Path) -> None:
    """A finish_reason object that reached a record (as it did before the wire checked
    shapes) is not appended as is: the record becomes an infrastructure failure the reader
    reads, and a record whose spec cannot be read is refused whole."""
    ep = episode(seed=3, steps=5)
    record = build(ep, cell(spec=ep.spec), perfect(ep))
    turn: TurnRecord = record.turns[0]
    bad_call = CallRecord(role="agent", finish_reason={"type": "stop"})  # type: ignore[arg-type]
    hostile = msgspec.structs.replace(
        record, turns=(msgspec.structs.replace(turn, calls=(bad_call,)),)
    )
    with LogWriter(tmp_path) as writer:
        writer.write(hostile)
    (kept,) = _readable(tmp_path).values()
    assert kept.termination == "endpoint_error" and "unreadable" in (kept.error or "")
    bad_spec = msgspec.structs.replace(record.spec, steps="five")
    bad_seed = msgspec.structs.replace(record, spec=bad_spec)
    with LogWriter(tmp_path) as writer, pytest.raises(UnreadableRecord):
        writer.write(bad_seed)
    assert len(_readable(tmp_path)) == 1


@pytest.mark.parametrize("mode", ["content_number", "redirect_file", "flood", "error_escapes"])
def test_ladder_run_ends_in_exit_0_or_one_line(mode: str, tmp_path: Path) -> None:
    """``ladder run`` in a subprocess, preflight included: a hostile endpoint refused by the
    preflight is one line on stderr (exit 2); otherwise the run finishes (exit 0)."""
    from tests.reliability_kit import ladder_argv

    async def serve_and_run() -> subprocess.CompletedProcess[str]:
        async with hostile_endpoint() as url:
            grid_file = tmp_path / "grid.toml"
            grid_file.write_text(grid_toml(_grid(url(mode), arms=("raw",))))
            argv = ladder_argv("run", str(grid_file), "--out", str(tmp_path / "run"), "--no-live")
            proc = await asyncio.create_subprocess_exec(
                *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            out, err = await proc.communicate()
            return subprocess.CompletedProcess(
                argv, proc.returncode or 0, out.decode(), err.decode()
            )

    done = asyncio.run(serve_and_run())
    text = done.stdout + done.stderr
    assert "Traceback" not in text and "\x1b]" not in text, text
    assert done.returncode in (0, 2), text
    if done.returncode == 2:  # one refusal, wrapped within 80 columns with its prefix (#49)
        lines = done.stderr.strip().splitlines()
        assert 1 <= len(lines) <= 3, done.stderr
        assert all(x.startswith("error:") and len(x) <= 80 for x in lines), done.stderr
    if (tmp_path / "run" / "logs").is_dir():
        _readable(tmp_path / "run")


async def test_records_of_another_grid_are_reported_and_excluded(tmp_path: Path) -> None:
    from runner.rundir.results import read_results

    grid = parse_grid(grid_data(seeds="100", arms=("raw",)))
    out = tmp_path / "run"
    await run_inprocess(grid, out)
    (record,) = read_logs(out).values()
    foreign = msgspec.structs.replace(record, spec=msgspec.structs.replace(record.spec, seed=555))
    with LogWriter(out) as writer:
        writer.write(foreign)
    summary, console = await run_inprocess(grid, out)
    assert "of another grid" in console and summary["already_done"] == 1
    cells = [x for x in read_results(out) if hasattr(x, "seeds")]
    assert cells and all(c.seeds == (100,) for c in cells)


async def test_model_escapes_are_shown_never_obeyed(tmp_path: Path) -> None:
    """A reply carrying ESC]0; (window title), ESC[2J and colour codes: `ladder show`, the
    report and the run's console show them as text."""
    from typer.testing import CliRunner

    from ladder.app import app

    async with hostile_endpoint() as url:
        grid = parse_grid(_grid(url("escapes"), arms=("raw",)))
        _, console = await run_inprocess(grid, tmp_path / "run", check=False)
    assert "\x1b" not in console
    shown = CliRunner().invoke(app, ["show", str(tmp_path / "run")])
    assert shown.exit_code == 0, shown.stdout + shown.stderr
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in shown.stdout and "\x1b" not in shown.stdout
    report = CliRunner().invoke(app, ["report", str(tmp_path / "run" / "logs")])
    assert report.exit_code == 0, report.stdout + report.stderr
    assert (tmp_path / "run" / "report.md").is_file(), "written beside logs/, not into it"
    assert not list((tmp_path / "run" / "logs").glob("report*"))
    assert "\x1b" not in (tmp_path / "run" / "report.md").read_text()
