"""The viewer's build on workers: configurations shared out whole across models, a
configuration that would overload its worker split by arm, the index the same as one
process builds."""

from __future__ import annotations

import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import msgspec
import pytest

from runner.viewer.build import _shared_out
from runner.viewer.index import RunIndex
from tests.view_run import make_run

ARMS = ("raw", "checklist", "directive", "enforce", "hybrid", "ledger")
# five configurations' sizes, as the bench's grid (S18 the biggest, S5 the smallest)
CONFIGS = {"S18__rho0.15": 173, "S15__rho0.3": 166, "S15__rho0.15": 163, "S10__rho0.15": 147}
CONFIGS["S5__rho0.15"] = 132


def _name(model: str, config: str, arm: str) -> str:
    return f"logs/bench_{model}__no-think__{config}__procurement__amended__{arm}.jsonl"


def _grid() -> tuple[list[list[str]], dict[str, int]]:
    groups: list[list[str]] = []
    sizes: dict[str, int] = {}
    for config, size in CONFIGS.items():
        group = [_name(m, config, arm) for m in ("model-a", "model-b") for arm in ARMS]
        groups.append(group)
        for i, p in enumerate(group):  # the ledger arm's files the biggest
            sizes[p] = size * (3 if p.endswith("ledger.jsonl") else 2) + i % 2
    return groups, sizes


def test_configurations_stay_whole_but_one_left_to_the_tail_by_arm() -> None:
    groups, sizes = _grid()
    shares, tail = _shared_out(groups, sizes, 2)
    whole = [g for share in shares for g, _ in share]
    assert sorted(whole) == [0, 1, 2, 3]  # each on one worker, every model's files
    for share in shares:
        for g, paths in share:
            assert paths == groups[g]
    assert {g for g, _ in tail} == {4}  # the smallest: every arm's files of both models
    assert sorted(p for _, unit in tail for p in unit) == sorted(groups[4])
    for _, unit in tail:
        assert len(unit) == 2 and len({p.split("__")[-1] for p in unit}) == 1
    arms = [sum(sizes[p] for p in unit) for _, unit in tail]
    assert arms == sorted(arms, reverse=True)  # the biggest arm first
    loads = [sum(sizes[p] for _, paths in share for p in paths) for share in shares]
    assert abs(loads[0] - loads[1]) <= max(sum(sizes[p] for p in g) for g in groups)


def test_one_worker_takes_every_configuration_whole() -> None:
    groups, sizes = _grid()
    (share,), tail = _shared_out(groups, sizes, 1)
    assert [paths for _, paths in share] == groups and tail == []


def test_a_lone_configuration_is_all_tail() -> None:
    groups, sizes = _grid()
    shares, tail = _shared_out(groups[:1], sizes, 2)
    assert shares == [[], []]
    assert sorted(p for _, unit in tail for p in unit) == sorted(groups[0])


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("viewrun"))


def test_one_configuration_split_over_two_workers_indexes_as_one_process(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's one configuration (five files), its arms taken by two workers as each runs
    low: the same index and overview lines as one process builds."""
    import runner.viewer.build as build_mod
    import runner.viewer.index as index_mod
    from runner.viewer.data import RunView

    one, two = tmp_path / "one", tmp_path / "two"
    for where in (one, two):
        shutil.copytree(run_dir / "logs", where / "logs")
    expected = RunView(one).cells()
    pools: list[int] = []

    class Pool(ProcessPoolExecutor):
        def __init__(self, *a: Any, **k: Any) -> None:
            pools.append(1)
            super().__init__(*a, **k)

    monkeypatch.setattr(index_mod, "cores", lambda: 2)
    monkeypatch.setattr(index_mod, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(build_mod, "ProcessPoolExecutor", Pool)
    got = RunView(two).cells()
    assert pools == [1, 1]
    assert msgspec.structs.replace(got, run=expected.run) == expected
    a, b = RunIndex(one), RunIndex(two)
    assert list(a.files) == list(b.files)
    for name, fi in a.files.items():
        assert msgspec.msgpack.encode(b.files[name]) == msgspec.msgpack.encode(fi), name
    assert a.overview == b.overview is not None
