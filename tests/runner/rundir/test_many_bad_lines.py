"""Cost linear in input, memory flat (#47): a log of many tiny corrupt lines is counted
line by line, but only the first MAX_KEPT_PROBLEMS messages are held, by the reader and by
the viewer's index (which stored every message before)."""

from __future__ import annotations

from pathlib import Path

from runner.rundir.logs import MAX_KEPT_PROBLEMS, LogReport, LogWriter, Problems, read_logs
from runner.viewer.index import RunIndex
from tests.scoring_records import build, cell, episode, perfect

BAD = 5_000


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    ep = episode(seed=3, steps=5)
    with LogWriter(run) as w:
        w.write(build(ep, cell(spec=ep.spec), perfect(ep)))
    (run / "logs" / "junk.jsonl").write_bytes(b"{x\n" * BAD)
    return run


def test_the_reader_counts_every_bad_line_and_keeps_the_first(tmp_path: Path) -> None:
    report = LogReport()
    assert len(read_logs(_run(tmp_path), report)) == 1
    assert len(report.corrupt) == BAD and len(report.corrupt.kept) == MAX_KEPT_PROBLEMS
    assert report.corrupt[0].startswith("junk.jsonl:1:")


def test_the_view_index_counts_every_bad_line_and_keeps_the_first(tmp_path: Path) -> None:
    run = _run(tmp_path)
    index = RunIndex(run)
    index.refresh()
    assert len(index.files["logs/junk.jsonl"].corrupt) == MAX_KEPT_PROBLEMS
    assert len(index.report().corrupt) == BAD
    again = RunIndex(run)  # from the cached index
    assert len(again.report().corrupt) == BAD


def test_problems_merge_by_count() -> None:
    a, b = Problems(["x"] * 80), Problems(["y"] * 80)
    a += b
    assert len(a) == 160 and len(a.kept) == MAX_KEPT_PROBLEMS and a.kept[-1] == "y"
    assert Problems(["x"]) == ["x"] and Problems() == []
