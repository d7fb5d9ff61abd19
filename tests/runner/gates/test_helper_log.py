"""The run's helper log (``OUT/helpers.jsonl``): written once per helper request, read back
line by line, bounded, never through a planted link."""

from __future__ import annotations

from pathlib import Path

from protocol.records import HelperLogLine
from runner.gates.base import HelperLog, read_helper_log


def test_lines_written_are_read_back_and_a_torn_tail_is_counted(tmp_path: Path) -> None:
    log = HelperLog(tmp_path / "helpers.jsonl")
    lines = [HelperLogLine(kind="compile", key=f"k{i}", calls=()) for i in range(3)]
    for line in lines:
        log.write(line)
    with (tmp_path / "helpers.jsonl").open("ab") as f:
        f.write(b'{"type":"helper","kind":"matc')  # a kill mid-write
    got, bad = read_helper_log(tmp_path / "helpers.jsonl")
    assert got == lines and bad == 1


def test_a_missing_log_is_empty_and_a_planted_link_is_not_read(tmp_path: Path) -> None:
    assert read_helper_log(tmp_path / "helpers.jsonl") == ([], 0)
    secret = tmp_path / "elsewhere.jsonl"
    HelperLog(secret).write(HelperLogLine(kind="compile", key="k", calls=()))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "helpers.jsonl").symlink_to(secret)
    got, bad = read_helper_log(tmp_path / "run" / "helpers.jsonl")
    assert got == [] and bad == 1
