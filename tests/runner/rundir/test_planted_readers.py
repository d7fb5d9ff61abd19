"""Planted files, round two (#47): a FIFO, a link to /dev/zero or a link to a file outside,
planted as the viewer's index, as a log, as a paraphrase cache, as a gate cache file, or
where `ladder paraphrase` and `ladder domain new` write, is refused or ignored (never
blocked on, never read whole, never written through); a value nested 200,000 deep is one
decode error, never a RecursionError."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol.domains.packs import PackError, parse_pack
from protocol.nesting import MAX_NESTING, json_loads, nesting_depth, toml_loads
from runner.files import NotRegularFile, write_new
from runner.gates.cache import CompileStore, HelperStats
from runner.grid.expand import GridError, load_grid
from runner.grid.paraphrase_cache import ParaphraseCacheError, load_paraphrases
from runner.paraphrase.rewriter import load_cache, save_cache
from runner.rundir.logs import LogReport, LogWriter, read_logs
from runner.viewer.index import INDEX_FILE, RunIndex
from tests.scoring_records import build, cell, episode, perfect

DEEP = b"[" * 200_000 + b"]" * 200_000


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    ep = episode(seed=3, steps=5)
    with LogWriter(run) as w:
        w.write(build(ep, cell(spec=ep.spec), perfect(ep)))
    return run


def _plants(tmp_path: Path) -> list[tuple[str, Path | None]]:
    """(kind, link target or None for a FIFO): what each test plants in turn."""
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"secret\n")
    return [("fifo", None), ("zero", Path("/dev/zero")), ("outside", outside)]


def _plant(where: Path, target: Path | None) -> None:
    if where.exists() or where.is_symlink():
        where.unlink()
    if target is None:
        os.mkfifo(where)
    else:
        where.symlink_to(target)


def test_a_planted_view_index_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    run = _run(tmp_path)
    for _, target in _plants(tmp_path):
        _plant(run / INDEX_FILE, target)
        index = RunIndex(run)  # no hang on the FIFO, no endless read of /dev/zero
        assert index.files == {}
        index.refresh()
        assert len(index.scores()) == 1
        assert not (run / INDEX_FILE).is_symlink()  # replaced, its target left alone
    assert (tmp_path / "outside.txt").read_bytes() == b"secret\n"


def test_a_planted_log_is_refused_by_the_viewer_naming_it(tmp_path: Path) -> None:
    run = _run(tmp_path)
    for _, target in _plants(tmp_path):
        _plant(run / "logs" / "zz.jsonl", target)
        with pytest.raises(NotRegularFile, match=r"zz\.jsonl"):
            RunIndex(run).refresh()


def test_view_and_show_refuse_a_planted_log_in_one_line(tmp_path: Path) -> None:
    run = _run(tmp_path)
    name = "zz\x1b]0;owned\x07.jsonl"  # an OSC escape in the planted name
    os.mkfifo(run / "logs" / name)
    for args in (["show", str(run)], ["view", str(run), "--port", "0"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        (line,) = result.output.strip().splitlines()
        assert "not a regular file" in line and "\\x1b]0;owned\\x07" in line
        assert "\x1b" not in line


def test_a_planted_paraphrase_cache_is_one_error(tmp_path: Path) -> None:
    cache = tmp_path / "cache.json"
    for kind, target in _plants(tmp_path):
        _plant(cache, target)
        if kind == "outside":
            continue  # a link the user named to a regular file is read (it is not JSON)
        with pytest.raises(ParaphraseCacheError, match="not a regular file"):
            load_paraphrases(cache, ["procurement"], 3)
    cache.unlink()
    cache.write_bytes(DEEP)
    with pytest.raises(ParaphraseCacheError, match="nested deeper"):
        load_paraphrases(cache, ["procurement"], 3)
    result = CliRunner().invoke(app, ["generate", "--paraphrase-cache", str(cache)])
    assert result.exit_code == 2 and "nested deeper" in result.output


def test_the_rewriters_cache_is_read_and_written_never_through_a_link(tmp_path: Path) -> None:
    out = tmp_path / "cache.json"
    victim = tmp_path / "victim.json"
    victim.write_bytes(b"keep")
    (tmp_path / "cache.json.tmp").symlink_to(victim)  # the old fixed temporary name
    out.symlink_to(victim)
    with pytest.raises(ValueError, match="symlink"):
        load_cache(out)
    save_cache(out, {"x": {"asks": [["a {wo}"]]}})
    assert victim.read_bytes() == b"keep" and not out.is_symlink()
    assert load_cache(out) == {"x": {"asks": [["a {wo}"]]}}
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(ValueError, match="not a regular file"):
        load_cache(tmp_path / "fifo.json")


def test_paraphrase_never_appends_through_a_planted_calls_log(tmp_path: Path) -> None:
    out = tmp_path / "cache.json"
    victim = tmp_path / "victim.jsonl"
    victim.write_bytes(b"keep\n")
    (tmp_path / "cache.json.calls.jsonl").symlink_to(victim)
    args = ["paraphrase", "--model", "scripted/perfect", "--base-url", "embedded"]
    result = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "calls.jsonl" in result.output and "Traceback" not in result.output
    assert victim.read_bytes() == b"keep\n"


def test_a_planted_gate_cache_file_is_counted_corrupt_not_read(tmp_path: Path) -> None:
    stats = HelperStats()
    store = CompileStore(tmp_path, stats)
    for _, target in _plants(tmp_path):
        _plant(store.path("k" * 40), target)
        assert store.load("k" * 40) is None
    assert stats.corrupt == 3
    assert (tmp_path / "outside.txt").read_bytes() == b"secret\n"


def test_domain_new_never_writes_through_a_dangling_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim.toml"
    link = tmp_path / "garden.toml"
    link.symlink_to(victim)  # dangling: exists() is False
    result = CliRunner().invoke(app, ["domain", "new", "garden", "--out", str(link)])
    assert result.exit_code == 2 and "exists" in result.output
    assert not victim.exists()
    with pytest.raises(FileExistsError):
        write_new(link, b"x")


def test_deep_nesting_is_one_decode_error_everywhere(tmp_path: Path) -> None:
    run = _run(tmp_path)
    with (run / "logs" / "deep.jsonl").open("wb") as f:
        f.write(DEEP + b"\n")
    report = LogReport()
    assert len(read_logs(run, report)) == 1
    assert len(report.corrupt) == 1 and "deep.jsonl:1" in report.corrupt[0]
    grid = tmp_path / "grid.toml"
    grid.write_bytes(b"a = " + DEEP + b"\n")
    with pytest.raises(GridError, match="nested deeper"):
        load_grid(grid)
    with pytest.raises(PackError, match="nested deeper"):
        parse_pack("x = " + "[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1), "deep.toml")
    with pytest.raises(msgspec.DecodeError, match="nested deeper"):
        json_loads(DEEP)
    assert toml_loads("a = [[1]]") == {"a": [[1]]}


def test_nesting_depth_is_counted_without_recursion() -> None:
    value: list[object] = []
    for _ in range(100_000):
        value = [value]
    assert nesting_depth(value) == MAX_NESTING + 1  # the walk stops past the cap
    assert nesting_depth({"a": [1, {"b": 2}]}) == 3 and nesting_depth(5) == 0
