"""Rescoring on every core gives exactly the serial result (lines, order, report)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

import runner.rundir.rescore as rescore_mod
import runner.rundir.rescore_part as part_mod
from ladder.app import app
from protocol.records import EpisodeRecord
from runner.execution.grid_run import run_async
from runner.grid.expand import parse_grid
from runner.grid.packs import loaded_texts
from runner.rundir.logs import LogReport, decode_record, log_files, read_logs
from runner.rundir.rescore import rescore_dir
from scoring.replay.episode_score import score_episode
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import cell_sort_key
from scoring.results.gate_report import helper_lines, matcher_report
from scoring.results.helper_tally import HelperTally
from scoring.results.lines import CellLine, HelperLine
from scoring.results.offline import rescore, score_records
from scoring.results.stream import StreamingScorer


def _grid() -> dict[str, Any]:
    return {
        "run": {
            "seeds": "100-101",
            "graphs": [{"steps": 10, "density": 0.15}, {"steps": 5, "density": 0.3}],
            "arms": ["raw", "checklist", "enforce"],
            "concurrency": 32,
        },
        "models": [{"name": "scripted/synthetic?obey=0.8&fresh=0.3&seed=3"}],
    }


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import asyncio

    out = tmp_path_factory.mktemp("run")
    asyncio.run(
        run_async(parse_grid(_grid()), out, console=Console(file=io.StringIO()), live=False)
    )
    logs = sorted((out / "logs").glob("*.jsonl"))
    assert len(logs) == 6
    with logs[0].open("ab") as f:  # a corrupt line, then a later copy of a record
        f.write(b'{"not": "a record"}\n')
        f.write(logs[0].read_bytes().splitlines()[0] + b"\n")
    with logs[-1].open("ab") as f:
        f.write(b'{"truncated": ')  # a kill mid-write
    return out


class _Spy:
    def __init__(self) -> None:
        self.merged: list[bool] = []

    def wrap(self, merge: Any) -> Any:
        def spy(*a: Any) -> Any:
            out = merge(*a)
            self.merged.append(out is not None)
            return out

        return spy


def _serial(run_dir: Path) -> tuple[list[Any], LogReport]:
    report = LogReport()
    records = read_logs(run_dir, report)
    return rescore(records.values()), report


def test_parallel_rescoring_equals_the_serial_path(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = _Spy()
    monkeypatch.setattr(rescore_mod, "_merge", spy.wrap(rescore_mod._merge))
    want, want_report = _serial(run_dir)
    assert any(isinstance(x, HelperLine) for x in want)
    assert any(isinstance(x, CellLine) for x in want)
    report = LogReport()
    lines, n = rescore_dir(run_dir, report, jobs=3, min_bytes=0)
    assert spy.merged == [True]  # the worker processes ran, and their merge was used
    assert lines == want
    assert report == want_report and report.duplicates == 1
    assert len(report.corrupt) == 1 and len(report.truncated) == 1
    assert n == report.records - report.duplicates
    serial_report = LogReport()
    assert rescore_dir(run_dir, serial_report, jobs=1) == (want, n)  # small: serial
    assert serial_report == want_report and spy.merged == [True]
    # one process, the workers' groups one at a time in it (#50): merged, the same
    grouped_report = LogReport()
    assert rescore_dir(run_dir, grouped_report, jobs=1, min_bytes=0) == (want, n)
    assert grouped_report == want_report and spy.merged == [True, True]


def test_a_cell_split_over_two_files_falls_back_to_the_serial_rule(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = _Spy()
    monkeypatch.setattr(rescore_mod, "_merge", spy.wrap(rescore_mod._merge))
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    first = sorted((copy / "logs").glob("*.jsonl"))[0]
    (copy / "logs" / "older").mkdir()
    shutil.copy(first, copy / "logs" / "older" / first.name)  # the same cell twice
    want, want_report = _serial(copy)
    report = LogReport()
    assert rescore_dir(copy, report, jobs=2, min_bytes=0)[0] == want
    assert report == want_report
    assert spy.merged == [False]


def test_score_takes_jobs_and_report_refuses_the_flag_it_ignored(
    run_dir: Path, tmp_path: Path
) -> None:
    cli = CliRunner()
    one = cli.invoke(app, ["score", str(run_dir), "--json", "--jobs", "1"])
    every = cli.invoke(app, ["score", str(run_dir), "--json"])
    assert one.exit_code == 0 and one.stdout == every.stdout
    bad = cli.invoke(app, ["score", str(run_dir), "--jobs", "-1"])
    assert bad.exit_code == 2
    rep = cli.invoke(app, ["report", str(run_dir), "--out", str(tmp_path / "r.md"), "-j", "2"])
    assert rep.exit_code == 2 and not (tmp_path / "r.md").exists()  # it scored in one process
    rep = cli.invoke(app, ["report", str(run_dir), "--out", str(tmp_path / "r.md")])
    assert rep.exit_code == 0 and (tmp_path / "r.md").is_file()


def test_parallel_serial_and_streaming_scores_are_byte_identical(run_dir: Path) -> None:
    """The same records scored by the worker processes' path (shared replays), the serial
    path, the streaming scorer and one fresh ``score_episode`` each encode to the same bytes."""
    records = read_logs(run_dir, LogReport())
    fresh = [msgspec.json.encode(score_episode(r, detail=False)) for r in records.values()]
    serial = [msgspec.json.encode(s) for s in score_records(records.values(), EpisodeCache())]
    part = part_mod.score_group([str(p) for p in log_files(run_dir)])
    parallel = [msgspec.json.encode(part.scores[k]) for k in records]
    streaming = StreamingScorer(expected_seeds_of(records.values()))
    streamed = [msgspec.json.encode(streaming.score(r)) for r in records.values()]
    assert fresh == serial == parallel == streamed
    # with per-turn detail too (as ``ladder report`` and the viewer score)
    detailed = score_records(records.values(), EpisodeCache(), detail=True)
    assert [msgspec.json.encode(s) for s in detailed] == [
        msgspec.json.encode(score_episode(r)) for r in records.values()
    ]


def test_a_worker_regenerates_a_configuration_once_for_all_its_groups(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Any] = []
    generate = EpisodeCache._generate

    def spy(self: EpisodeCache, spec: Any) -> Any:
        made.append(spec)
        return generate(self, spec)

    monkeypatch.setattr(EpisodeCache, "_generate", spy)
    monkeypatch.setattr(part_mod, "_KEPT", [])  # this process is no worker: nothing kept
    paths = [str(p) for p in log_files(run_dir)]
    whole = part_mod.score_group(paths)
    assert len(made) == len(set(made)) == 4  # two configurations of two seeds each
    one = [p for p in paths if "__S10__" in p]
    assert len(one) == 3
    part_mod.score_group(one[:1])
    assert len(made) == 6  # again: a caller's process keeps nothing
    part_mod.start_worker(loaded_texts())  # as a worker: kept from one group to the next
    parts = [part_mod.score_group([p]) for p in one]
    assert len(made) == 8  # the configuration's two episodes once for its three groups
    assert {k: s for part in parts for k, s in part.scores.items()} == {
        k: s for k, s in whole.scores.items() if any(k in part.scores for part in parts)
    }
    assert sum(len(part.scores) for part in parts) == 3 * 2
    part_mod.score_group([p for p in paths if "__S5__" in p][:1])
    assert len(made) == 10  # another configuration: its own


def test_a_cell_in_files_of_two_names_is_scored_at_once(run_dir: Path, tmp_path: Path) -> None:
    first = log_files(run_dir)[0]
    renamed = tmp_path / "renamed.jsonl"
    shutil.copy(first, renamed)  # the same cell under another name: one helper line needs both
    paths = [str(first), str(renamed)]
    assert part_mod._score_files(paths) is None
    part = part_mod.score_group(paths)
    assert part == part_mod._score_whole(paths, False)
    assert len(part.cells) == 1 and len(part.helpers) <= 1
    assert part.files[str(renamed)].keys == part.files[str(first)].keys


def expected_seeds_of(records: Any) -> dict[Any, set[int]]:
    out: dict[Any, set[int]] = {}
    for r in records:
        out.setdefault(r.cell, set()).add(r.spec.seed)
    return out


def _log(folder: Path, model: str, steps: int, arm: str, size: int) -> Path:
    path = folder / f"{model}__no-think__S{steps}__rho0.15__procurement__amended__{arm}.jsonl"
    path.write_bytes(b"x" * size)
    return path


def test_workers_score_every_model_of_a_configuration_together(tmp_path: Path) -> None:
    # each configuration's files of both models in one group: its episodes regenerated once
    # in the run, not once per model (#50)
    paths = [
        _log(tmp_path, model, steps, arm, 100 * steps)
        for model in ("m-a", "m-b")
        for steps in (5, 10, 15)
        for arm in ("raw", "enforce")
    ]
    groups = rescore_mod._worker_groups(paths, 2)
    assert len(groups) == 6
    for group in groups[:2]:  # S15 and S10: one group each, both models
        assert len(group) == 4
        assert len({Path(p).name.split("__")[2] for p in group}) == 1  # one configuration
        assert {Path(p).name.split("__")[0] for p in group} == {"m-a", "m-b"}
    # three configurations on two workers: the smallest (S5) scored last, one file a group,
    # taken by whichever worker is free (#50: not two for one worker and one for the
    # other; sixth round: not half a configuration each)
    assert sorted(Path(g[0]).name for g in groups[2:]) == sorted(
        f"{m}__no-think__S5__rho0.15__procurement__amended__{arm}.jsonl"
        for m in ("m-a", "m-b")
        for arm in ("raw", "enforce")
    )
    assert all(len(g) == 1 for g in groups[2:])
    # whole rounds: none split by model, the smallest configuration one file a group
    assert rescore_mod._balanced(groups[:2], 2) == [groups[0]] + [[p] for p in groups[1]]
    # a configuration bigger than a worker's share, or fewer configurations than workers:
    # one model's files each, as before
    assert rescore_mod._worker_groups(paths[:2] + paths[6:8], 2) == rescore_mod.config_groups(
        paths[:2] + paths[6:8]
    )
    big = [*paths, _log(tmp_path, "m-a", 18, "raw", 20_000)]
    assert rescore_mod._worker_groups(big, 2) == rescore_mod.config_groups(big)
    assert len(rescore_mod._worker_groups(big, 2)) == 7
    # one cell's files in two folders stay together in the last groups
    (tmp_path / "older").mkdir()
    again = _log(tmp_path / "older", "m-a", 10, "raw", 10)
    split = rescore_mod._balanced([groups[0], [*groups[1], str(again)]], 2)
    assert len(split) == 5 and sorted(map(len, split[1:])) == [1, 1, 1, 2]
    (pair,) = (g for g in split if str(again) in g)
    assert len(pair) == 2 and len({Path(p).name for p in pair}) == 1
    # and a cell's stressed variants with it (a worker's report parts of the plain cell
    # keep what they read)
    styled = tmp_path / f"{Path(again).stem}__user_style=restate.jsonl"
    styled.write_bytes(b"x")
    split = rescore_mod._balanced([groups[0], [*groups[1], str(again), str(styled)]], 2)
    (three,) = (g for g in split if str(again) in g)
    assert sorted(three) == sorted([*pair, str(styled)])


def test_records_scored_as_they_are_read_give_the_batches_read_at_once(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a worker scores each record as it is read and drops it (#50, ninth round): the same
    # part as its batches read at once, with a record superseded in its file (the fixture),
    # a key in two files of one batch and a newer schema's line (the group stops there)
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    logs = log_files(copy)
    (copy / "logs" / "again").mkdir()
    (copy / "logs" / "again" / logs[1].name).write_bytes(
        logs[1].read_bytes().splitlines()[0] + b"\n"
    )
    newer = (
        logs[2].read_bytes().splitlines()[0].replace(b'"schema_version":2', b'"schema_version":99')
    )
    assert newer != logs[2].read_bytes().splitlines()[0]
    gate = next(p for p in logs if p.stem.endswith("enforce"))
    first, *rest = gate.read_bytes().splitlines()
    # its first episode neither compiled nor ran the matcher: its cell's line starts later
    gate.write_bytes(b"\n".join([msgspec.json.encode(_quiet(decode_record(first))), *rest]) + b"\n")
    with logs[2].open("ab") as f:
        f.write(newer + b"\n")
    streamed: list[bool] = []
    each = part_mod._streamed

    def spy(*a: Any) -> Any:
        out = each(*a)
        streamed.append(out is not None)
        return out

    groups = rescore_mod.config_groups(log_files(copy), across_models=True)
    monkeypatch.setattr(part_mod, "_streamed", spy)
    got = [part_mod._score_files(g) for g in groups]
    assert True in streamed and False in streamed  # streamed, and read again at once
    monkeypatch.setattr(part_mod, "_streamed", lambda *a: None)  # every batch at once
    want = [part_mod._score_files(g) for g in groups]
    assert got == want
    assert any(f.error for p in want if p is not None for f in p.files.values())
    assert any(p is not None and p.helpers for p in want)


def _gated(r: EpisodeRecord) -> bool:
    return r.compile is not None or matcher_report([r]).turns > 0


def _quiet(r: EpisodeRecord) -> EpisodeRecord:
    """``r`` as if its gate neither compiled nor ran the matcher."""
    turns = tuple(msgspec.structs.replace(t, matched_redo=None) for t in r.turns)
    return msgspec.structs.replace(r, compile=None, turns=turns)


@settings(max_examples=60)
@given(st.data())
def test_helper_counts_added_one_at_a_time_give_the_helpers_lines(
    run_dir: Path, data: st.DataObject
) -> None:
    # any records of the run in any order, some made quiet (no compile, no matcher): where
    # the tally is complete, its lines are helper_lines'; it is not complete exactly where a
    # cell's line starts after the cell's first completed record (#50, ninth round)
    pool = list(read_logs(run_dir).values())
    picked = data.draw(st.lists(st.sampled_from(range(len(pool))), max_size=30))
    quiet = data.draw(st.lists(st.booleans(), min_size=len(picked), max_size=len(picked)))
    records = [_quiet(pool[i]) if q else pool[i] for i, q in zip(picked, quiet, strict=True)]
    tally = HelperTally()
    for r in records:
        tally.add(r)
    done = [r for r in records if r.termination == "completed"]
    gated = {r.cell for r in done if _gated(r)}
    first: dict[Any, EpisodeRecord] = {}
    for r in done:
        first.setdefault(r.cell, r)
    late = any(c in gated and not _gated(r) for c, r in first.items())
    assert tally.complete == (not late)
    if tally.complete:
        got = [line for c in sorted(tally.cells(), key=cell_sort_key) for line in tally.lines(c)]
        assert got == helper_lines(records)
