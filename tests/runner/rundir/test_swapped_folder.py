"""A folder swapped for a link during a run is refused, never written through (#47): every
file a run opens under its directory (a cell's log, a matcher shard, a compile entry) is
reached folder by folder from the run directory without following a link."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runner.files import JsonlAppender, NotRegularFile, write_atomic
from runner.gates.cache import CompileStore, HelperStats, MatchAnswer, MatcherStore
from runner.rundir.logs import LogWriter
from tests.scoring_records import build, cell, episode, perfect


def _swap(folder: Path, outside: Path) -> None:
    shutil.rmtree(folder)
    outside.mkdir(exist_ok=True)
    folder.symlink_to(outside)


def test_a_swapped_cache_folder_is_refused(tmp_path: Path) -> None:
    run, outside = tmp_path / "run", tmp_path / "outside"
    run.mkdir()
    store = MatcherStore(run / "cache" / "matcher", HelperStats(), root=run)
    store.store("aa" + "0" * 38, MatchAnswer("s1", False))
    assert (run / "cache" / "matcher" / "aa.jsonl").is_file()
    _swap(run / "cache" / "matcher", outside)
    with pytest.raises(NotRegularFile, match="a link or not a folder"):
        store.store("bb" + "0" * 38, MatchAnswer("s2", False))
    _swap(run / "cache", outside)  # a folder higher up
    compile_store = CompileStore(run / "cache" / "compile", HelperStats(), root=run)
    with pytest.raises(NotRegularFile):
        compile_store.store("c" * 40, {"key": "k"})
    assert list(outside.iterdir()) == []


def test_a_swapped_logs_folder_is_refused_for_a_new_cell(tmp_path: Path) -> None:
    run, outside = tmp_path / "run", tmp_path / "outside"
    ep = episode(seed=3, steps=5)
    writer = LogWriter(run)
    writer.write(build(ep, cell(spec=ep.spec), perfect(ep)))
    _swap(run / "logs", outside)
    other = cell(spec=ep.spec, arm="directive")
    with pytest.raises(NotRegularFile):
        writer.write(build(ep, other, perfect(ep)))
    writer.close()
    assert list(outside.iterdir()) == []


def test_without_a_swap_the_folders_are_made_on_the_way(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    write_atomic(run / "a" / "b" / "c.json", b"{}", root=run)
    with JsonlAppender(run / "a" / "d.jsonl", root=run) as f:
        f.write(b"x\n")
    assert (run / "a" / "b" / "c.json").read_bytes() == b"{}"
    assert (run / "a" / "d.jsonl").read_bytes() == b"x\n"
