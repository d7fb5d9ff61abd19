"""The viewer's index: built once, cached in the run directory, grown with the logs."""

from __future__ import annotations

import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import msgspec
import pytest

from runner.rundir.logs import read_logs
from runner.viewer.data import RunView
from runner.viewer.index import INDEX_FILE, RunIndex
from scoring.display.episode_facts import facts_cell_cost
from scoring.display.models import CellsView
from scoring.results.gate_report import merged_activity
from scoring.results.offline import score_records
from tests.runner.viewer.test_view_indexing import _copies, _on_two_workers
from tests.view_run import make_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("viewrun"))


@pytest.fixture
def copy(run_dir: Path, tmp_path: Path) -> Path:
    shutil.copytree(run_dir / "logs", tmp_path / "logs")
    return tmp_path


def test_the_index_holds_every_record_with_its_score_and_offset(copy: Path) -> None:
    index = RunIndex(copy)
    assert index.refresh() is True
    records = read_logs(copy)
    assert index.scanned == len(records) == 20
    assert len(index.slugs()) == 5
    scores = {(s.cell.slug(), s.seed): s for s in score_records(records.values())}
    for (slug, seed), rec in records.items():
        entry = index.entry(slug, seed)
        assert entry is not None and entry.score == scores[(slug, seed)]
        assert index.record(slug, seed) == rec  # read back from its byte offset
    assert (copy / INDEX_FILE).is_file()


def test_a_second_index_reads_the_cache_and_scores_nothing(copy: Path) -> None:
    RunIndex(copy).refresh()
    again = RunIndex(copy)
    assert again.refresh() is False
    assert again.scanned == 0 and len(again.scores()) == 20


def test_a_grown_log_is_scanned_from_where_the_index_stopped(copy: Path) -> None:
    first = RunIndex(copy)
    first.refresh()
    log = next(p for p in sorted((copy / "logs").glob("*.jsonl")) if p.name.endswith("__raw.jsonl"))
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:2]))  # the run had written two episodes of this cell ...
    index = RunIndex(copy)
    index.refresh()
    slug = log.stem
    assert index.scanned == 2 and len(index.entries(slug)) == 2
    with log.open("ab") as f:  # ... then a third and half of a fourth
        f.write(lines[2])
        f.write(lines[3][:100])
    grown = RunIndex(copy)
    assert grown.refresh() is True
    assert grown.scanned == 1 and len(grown.entries(slug)) == 3
    with log.open("ab") as f:  # the fourth is finished
        f.write(lines[3][100:])
    done = RunIndex(copy)
    done.refresh()
    assert done.scanned == 1 and len(done.entries(slug)) == 4
    assert done.report().corrupt == []


def test_a_replaced_log_is_indexed_again(copy: Path) -> None:
    RunIndex(copy).refresh()
    logs = sorted((copy / "logs").glob("*.jsonl"))
    a, b = logs[0], logs[1]
    a.write_bytes(b.read_bytes())  # same size or not, the first bytes differ
    index = RunIndex(copy)
    index.refresh()
    assert index.scanned == 4
    assert b.stem in index.slugs()


def test_a_corrupt_line_is_reported_and_skipped(copy: Path) -> None:
    log = sorted((copy / "logs").glob("*.jsonl"))[0]
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join([lines[0], b"{not json}\n", *lines[1:]]))
    index = RunIndex(copy)
    index.refresh()
    rep = index.report()
    assert rep.records == 20 and len(rep.corrupt) == 1 and log.name in rep.corrupt[0]


def test_a_stale_or_broken_cache_is_rebuilt(copy: Path) -> None:
    RunIndex(copy).refresh()
    (copy / INDEX_FILE).write_bytes(b"\x00garbage")
    index = RunIndex(copy)
    index.refresh()
    assert index.scanned == 20


def test_a_version_1_log_is_indexed_and_viewed(run_dir: Path, tmp_path: Path) -> None:
    """A line as schema 1 wrote it (compile graph keyed by step id, corruption events as
    plain objects) reads through the index into the same episode view."""
    (slug, seed), rec = next((k, r) for k, r in sorted(read_logs(run_dir).items()) if r.corruptions)
    data = msgspec.json.decode(msgspec.json.encode(rec))
    data["schema_version"] = 1
    data["compile"]["graph"] = {s.pop("id"): s for s in data["compile"]["graph"]}
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / f"{slug}.jsonl").write_bytes(msgspec.json.encode(data) + b"\n")
    old = RunView(tmp_path).episode(slug, seed)
    new = RunView(run_dir).episode(slug, seed)
    assert old is not None and new is not None
    assert old.compile == new.compile and old.compile is not None and old.compile.steps
    assert old.turns == new.turns and old.corruptions == new.corruptions


def test_on_every_core_the_index_is_the_one_process_index(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large logs are indexed in worker processes, one configuration's files each (#50):
    the same entries, scores, rows and counts, grown from a cached index the same way."""
    import runner.viewer.build as build_mod
    import runner.viewer.index as index_mod

    pools: list[int] = []

    class Pool(ProcessPoolExecutor):
        def __init__(self, *a: Any, **k: Any) -> None:
            pools.append(1)
            super().__init__(*a, **k)

    def built(where: Path, workers: bool) -> RunIndex:
        shutil.copytree(run_dir / "logs", where / "logs")
        logs = sorted((where / "logs").glob("*.jsonl"))[:2]
        lines = [log.read_bytes().splitlines(keepends=True) for log in logs]
        for log, got in zip(logs, lines, strict=True):
            log.write_bytes(b"".join(got[:2]))
        with monkeypatch.context() as m:
            m.setattr(index_mod, "cores", lambda: 2 if workers else 1)
            m.setattr(index_mod, "MIN_PARALLEL_BYTES", 0)
            m.setattr(build_mod, "ProcessPoolExecutor", Pool)
            # one configuration in this run: a file a group, so the workers share it
            m.setattr(build_mod, "config_groups", lambda paths, **_: [[str(p)] for p in paths])
            RunIndex(where).refresh()
            for log, got in zip(logs, lines, strict=True):  # grown, then a corrupt line
                log.write_bytes(b"".join(got) + b'{"broken": \n')
            index = RunIndex(where)
            assert index.refresh() is True
        return index

    one = built(tmp_path / "one", workers=False)
    assert pools == []
    every = built(tmp_path / "every", workers=True)
    assert pools == [1, 1, 1, 1]  # the first index and its growth, each on two workers
    assert one.scanned == every.scanned > 0
    assert list(every.files) == list(one.files)
    for name, fi in one.files.items():
        assert msgspec.msgpack.encode(every.files[name]) == msgspec.msgpack.encode(fi), name
    assert every.report().corrupt == one.report().corrupt


def _gated_task(group: int, name: str, path: str, old: Any, stop: Any) -> Any:
    """The workers' task: the parts of the file the first to start reads let through, every
    other held until the test opens the gate (a file beside the logs)."""
    import os
    import time

    from runner.viewer.entries import index_task

    run = Path(path).parent.parent
    try:
        fd = os.open(run / "first", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        os.write(fd, name.encode())
        os.close(fd)
    except FileExistsError:
        for _ in range(1200):  # at most a minute
            if (run / "gate").exists() or (run / "first").read_text() == name:
                break
            time.sleep(0.05)
    return index_task(group, name, path, old, stop)


def _two_copies_on_two_workers(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, CellsView]:
    """The run's logs copied twice: the overview of the first built in one go, and the second
    (returned) to be indexed on two workers, each file a group of its own."""
    one, bg = _copies(run_dir, tmp_path)
    expected = RunView(one).cells()
    _on_two_workers(monkeypatch)
    return bg, expected


def test_in_the_background_the_overview_fills_and_ends_as_one_built_in_one_go(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large first index built in the background (#50): the overview answers at once with
    the files indexed so far and how far it got, and once every file is in it is the overview
    built in one go, saved with the index."""
    import runner.viewer.build as build_mod

    bg, expected = _two_copies_on_two_workers(run_dir, tmp_path, monkeypatch)
    monkeypatch.setattr(build_mod, "index_task", _gated_task)
    view = RunView(bg, background=True)
    first = view.cells()
    total = len(list((bg / "logs").glob("*.jsonl")))
    assert first.indexing is not None and first.indexing.total == total > 2
    for _ in range(600):  # the one file let through comes back
        progress = view.index.progress()
        if progress is not None and progress.files:
            break
        view.index.built(0.1)
    partial = view.cells()
    assert partial.indexing is not None and partial.indexing.files == 1
    (cell,) = partial.cells  # one file is one cell, all of its episodes in
    assert partial.indexing.episodes == partial.log.records == cell.line.n > 0
    assert cell.line == next(c.line for c in expected.cells if c.slug == cell.slug)
    assert not (bg / INDEX_FILE).exists()  # saved when complete
    (bg / "gate").touch()
    assert view.index.built(60)
    done = view.cells()
    assert done.indexing is None
    assert msgspec.structs.replace(done, run=expected.run) == expected
    again = RunIndex(bg)
    assert again.overview == view.index.overview and again.overview is not None
    again.refresh()
    assert again.scanned == 0


def test_in_the_background_a_grown_index_keeps_what_it_held(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Logs grown under a cached index, read again in the background: the pages show every
    episode indexed before from the start, and the end is the index built in one go."""
    bg, expected = _two_copies_on_two_workers(run_dir, tmp_path, monkeypatch)
    logs = sorted((bg / "logs").glob("*.jsonl"))[:2]
    full = [log.read_bytes() for log in logs]
    for log, data in zip(logs, full, strict=True):
        log.write_bytes(b"".join(data.splitlines(keepends=True)[:2]))
    cached = RunIndex(bg)
    cached.refresh()
    held = cached.report().records
    for log, data in zip(logs, full, strict=True):
        log.write_bytes(data)
    view = RunView(bg, background=True)
    first = view.cells()
    assert first.indexing is not None and first.log.records >= held
    assert view.index.built(60) and view.index.scanned > 0  # the grown lines read
    done = view.cells()
    assert done.indexing is None
    assert msgspec.structs.replace(done, run=expected.run) == expected


def test_a_cells_cost_and_gate_activity_are_kept_while_its_entries_are_the_same(
    copy: Path,
) -> None:
    """The overview's cost and gate columns (asked by each page while the index fills, #50):
    a cell's computed again only when its entries changed, each equal to one computed from
    its entries afresh."""
    log = sorted((copy / "logs").glob("*.jsonl"))[0]
    full = log.read_bytes()
    log.write_bytes(b"".join(full.splitlines(keepends=True)[:-1]))  # its last line later
    index = RunIndex(copy)
    index.refresh()
    costs, gates = index.costs(), index.gates()
    assert all(index.costs()[s] is c for s, c in costs.items())
    log.write_bytes(full)
    assert index.refresh() is True
    grown = {e.slug for e in index.files[str(log.relative_to(copy))].entries.values()}
    again, gates_again = index.costs(), index.gates()
    for slug in index.slugs():
        entries = index.entries(slug)
        fresh = facts_cell_cost(
            [(e.facts.cost, e.facts.wall_s) for e in entries if e.facts.cost is not None]
        )
        assert again[slug] == fresh
        assert (again[slug] is costs[slug]) is (slug not in grown), slug
        parts = [e.gate for e in entries if e.gate is not None]
        assert gates_again.get(slug) == (merged_activity(parts) if parts else None)
    assert grown and again[next(iter(grown))] != costs[next(iter(grown))]
    assert set(gates_again) >= set(gates)
