"""The disk is untrusted (#36): planted links, FIFOs, devices and sparse files in a run
directory or named as a grid or a pack are refused or skipped (never read whole, never
blocked on, never written through), and seeds outside 0..2^63-1 are refused at parse."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from protocol.domains.packs import PackError
from runner.files import JsonlAppender, NotRegularFile, lines, read_regular, write_atomic
from runner.grid.expand import GridError, load_grid, parse_grid
from runner.grid.packs import read_pack
from runner.grid.seeds import MAX_SEEDS, count_seeds, parse_seeds
from runner.rundir.logs import LogReport, LogWriter, read_logs
from tests.reliability_kit import grid_data
from tests.scoring_records import build, cell, episode, perfect


def _record(seed: int = 3):  # type: ignore[no-untyped-def]
    ep = episode(seed=seed, steps=5)
    return build(ep, cell(spec=ep.spec), perfect(ep))


def _plant(logs: Path) -> Path:
    """A run directory's logs/ holding a record, a link to /dev/zero, a FIFO and a link to
    a file outside; returns the outside file."""
    with LogWriter(logs.parent) as w:
        w.write(_record())
    (logs / "zero.jsonl").symlink_to("/dev/zero")
    os.mkfifo(logs / "fifo.jsonl")
    outside = logs.parent.parent / "outside.jsonl"
    outside.write_bytes(b"secret\n")
    (logs / "outside.jsonl").symlink_to(outside)
    return outside


def test_planted_logs_are_refused_naming_them_and_never_read(tmp_path: Path) -> None:
    run = tmp_path / "run"
    outside = _plant(run / "logs")
    for name in ("fifo.jsonl", "outside.jsonl", "zero.jsonl"):
        with pytest.raises(NotRegularFile, match=name):
            read_logs(run, LogReport())  # no hang on the FIFO, no endless read of /dev/zero
        (run / "logs" / name).unlink()
    assert len(read_logs(run, LogReport())) == 1
    assert outside.read_bytes() == b"secret\n"


def test_a_log_line_over_the_cap_is_skipped_without_being_held(tmp_path: Path) -> None:
    sparse = tmp_path / "sparse.jsonl"
    with sparse.open("wb") as f:
        f.truncate(16 << 20)  # 16 MiB of zeros, no newline: a sparse file
        f.seek(0, os.SEEK_END)
        f.write(b"\nnext\n")
    got = list(lines(sparse, cap=1 << 20))
    assert [(x.text, x.complete) for x in got] == [(None, True), (b"next", True)]
    assert got[1].offset == (16 << 20) + 1


def test_writes_never_follow_a_planted_link(tmp_path: Path) -> None:
    target = tmp_path / "victim.txt"
    target.write_bytes(b"keep")
    link = tmp_path / "results.jsonl"
    link.symlink_to(target)
    with pytest.raises(OSError):
        JsonlAppender(link)
    write_atomic(link, b"new")
    assert target.read_bytes() == b"keep" and not link.is_symlink()
    assert link.read_bytes() == b"new"
    run = tmp_path / "run"
    (run / "logs").mkdir(parents=True)
    rec = _record()
    (run / "logs" / f"{rec.cell.slug()}.jsonl").symlink_to(target)
    with pytest.raises(OSError), LogWriter(run) as w:
        w.write(rec)
    assert target.read_bytes() == b"keep"


def test_grids_and_packs_are_read_only_from_regular_files(tmp_path: Path) -> None:
    fifo = tmp_path / "grid.toml"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        with pytest.raises(GridError, match="not a regular file"):
            load_grid(path)
        with pytest.raises(PackError, match="not a regular file"):
            read_pack(path)
    big = tmp_path / "big.toml"
    with big.open("wb") as f:
        f.truncate((64 << 20) + 1)
    with pytest.raises(NotRegularFile, match="over"):
        read_regular(big)


def test_seeds_outside_the_signed_64_bit_range_are_refused_at_parse() -> None:
    for text in (str(2**63), f"5,{2**64}", f"1-{2**63}"):
        with pytest.raises(ValueError, match=r"0\.\.2\^63-1"):
            parse_seeds(text)
    assert parse_seeds(str(2**63 - 1)) == [2**63 - 1]
    with pytest.raises(GridError, match="seeds"):
        parse_grid(grid_data(seeds=str(2**64)))


def test_a_huge_seed_range_is_counted_not_listed() -> None:
    assert count_seeds("0-1000000000000") == 10**12 + 1  # instant: never materialised
    with pytest.raises(ValueError, match=f"at most {MAX_SEEDS}"):
        parse_seeds("0-1000000000")


def test_a_run_directory_holding_links_is_refused_in_one_line(tmp_path: Path) -> None:
    from tests.reliability_kit import grid_toml, ladder

    run = tmp_path / "run"
    outside = _plant(run / "logs")
    grid_file = tmp_path / "grid.toml"
    grid_file.write_text(grid_toml(grid_data(seeds="100", arms=("raw",))))
    done = ladder("run", str(grid_file), "--out", str(run), "--no-live")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "logs/zero.jsonl" in done.stderr and "regular files only" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert outside.read_bytes() == b"secret\n"


def test_models_whose_slugs_collide_are_refused_naming_both() -> None:
    data = grid_data(seeds="100", arms=("raw",))
    data["models"] = [
        {"name": "scripted/perfect", "endpoint": "embedded"},
        {"name": "scripted_perfect", "endpoint": "embedded"},
    ]
    with pytest.raises(GridError) as refused:
        parse_grid(data)
    (line,) = str(refused.value).splitlines()
    assert "'scripted/perfect'" in line and "'scripted_perfect'" in line and "log file" in line
    data["models"] = data["models"][:1]
    data["endpoints"] = data["endpoints"] * 2
    with pytest.raises(GridError, match="endpoint 'embedded' is listed twice"):
        parse_grid(data)
