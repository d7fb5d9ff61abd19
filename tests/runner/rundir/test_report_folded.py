"""``ladder report``'s workers fold each record into the tables' values as it is read (#50,
tenth round): every built-in table declares a Fold, and a worker's part (its analyses'
parts, scores, cuts and what it left out) is the part of the same files read whole, for a
plain configuration, a stressed one, a stressed cell behind a plain file name, and a table
that is not a Fold."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import msgspec
import pytest

import runner.rundir.rescore_part as part_mod
from runner.rundir.logs import read_logs
from scoring.analyses import registry
from scoring.analyses.base import Analysis, Fold, Pair, Table
from scoring.analyses.folding import Folding, folds_of
from scoring.analyses.registry import ANALYSES, STRESS_ONLY, batch_parts
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.offline import score_records
from tests.stress_run_kit import styled_and_plain_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One configuration with user-style and spoof cells (stressed), one with none."""
    styled = [
        {"arm": a, **k}
        for a in ("raw", "enforce")
        for k in ({"user_style": "restate"}, {"user_style": "restate_plain"}, {"spoof": "receipt"})
    ]
    return styled_and_plain_run(tmp_path_factory, styled)


def _paths(run_dir: Path, pattern: str) -> list[str]:
    return [str(p) for p in sorted((run_dir / "logs").glob(pattern))]


def _same(a: part_mod.Part, b: part_mod.Part) -> None:
    """Two parts equal in everything the parent merges (the scores by value)."""
    assert list(a.scores) == list(b.scores)
    enc = msgspec.msgpack.encode
    assert enc(list(a.scores.values())) == enc(list(b.scores.values()))
    assert (a.helpers, a.cells, a.skipped) == (b.helpers, b.cells, b.skipped)
    assert enc(a.detail) == enc(b.detail)
    assert {p: (f.keys, f.error) for p, f in a.files.items()} == {
        p: (f.keys, f.error) for p, f in b.files.items()
    }


def test_every_built_in_table_declares_a_fold() -> None:
    folds = folds_of()
    assert folds is not None and list(folds) == [t.name for t in ANALYSES.entries()]
    # tables that share a compute share one fold, so its values are made once per pair
    assert folds["dose_response"] is folds["stress_interaction"]
    assert folds["stress_turns"] is folds["stress_pressure"] is folds["stress_pressure_episodes"]


@pytest.mark.parametrize("pattern", ["*S6*.jsonl", "*S10*.jsonl", "*.jsonl"])
def test_a_folded_part_is_the_part_read_whole(run_dir: Path, pattern: str) -> None:
    paths = _paths(run_dir, pattern)
    folded = part_mod.score_group(paths, detail=True)
    whole = part_mod._score_whole(paths, detail=True)
    _same(folded, whole)
    assert folded.detail and any(any(parts.values()) for _, _, parts, _ in folded.detail)
    if pattern == "*S6*.jsonl":  # plain: the stress-only tables left out, as read whole
        assert folded.skipped and all(d[2][n] == [] for d in folded.detail for n in STRESS_ONLY)


def test_folding_gives_batch_parts_cell_by_cell(run_dir: Path) -> None:
    """Pair by pair, with a later trial of each record among them (only trial 0's are
    folded, as batch_parts reads only trial 0's), every cell's parts are batch_parts'."""
    read = [r for r in read_logs(run_dir).values() if r.cell.steps == 10]
    records = [x for r in read for x in (r, msgspec.structs.replace(r, trial=1))]
    cache = EpisodeCache()
    pairs = list(zip(records, score_records(records, cache, detail=True), strict=True))
    folds = folds_of()
    assert folds is not None
    folding = Folding(folds, cache)
    for pair in pairs:
        folding.add(pair)
    cells = list(dict.fromkeys(r.cell for r in records))
    assert folding.cells() == cells and len(cells) == 8
    for cell in cells:
        batch = [p for p in pairs if p[0].cell == cell]
        assert msgspec.msgpack.encode(folding.parts(cell)) == msgspec.msgpack.encode(
            batch_parts(batch, cache)
        )


def test_a_stressed_cell_behind_a_plain_name_is_read_whole(run_dir: Path, tmp_path: Path) -> None:
    """A file named for no knob that holds a stressed cell: the folding, which left the
    stress-only tables out, gives the batch up and it is read whole, every table made."""
    (styled,) = _paths(run_dir, "*S10*enforce*user_style=restate.jsonl")
    hidden = tmp_path / "logs" / Path(styled).name.replace("__user_style=restate", "")
    hidden.parent.mkdir()
    shutil.copy(styled, hidden)
    assert "=" not in hidden.name
    folded = part_mod.score_group([str(hidden)], detail=True)
    _same(folded, part_mod._score_whole([str(hidden)], detail=True))
    assert folded.skipped == [] and any(folded.detail[0][2][n] for n in STRESS_ONLY)


def test_a_table_that_is_not_a_fold_keeps_its_batch(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin's table whose compute is a plain function: the workers read each batch
    whole for it, and its parts are those of the batch."""
    seen: list[int] = []

    def plain(batch: Sequence[Pair], cache: EpisodeCache) -> list[int]:
        seen.append(len(batch))
        return [len(batch)]

    tables: tuple[Table, ...] = ANALYSES.entries()
    first = tables[0]
    assert isinstance(first, Analysis) and isinstance(first.compute, Fold)
    changed = (replace(first, compute=plain), *tables[1:])
    monkeypatch.setattr(registry.ANALYSES, "entries", lambda: changed)
    assert folds_of() is None
    paths = _paths(run_dir, "*S10*.jsonl")
    part = part_mod.score_group(paths, detail=True)
    assert seen and all(d[2][first.name] == [n] for d, n in zip(part.detail, seen, strict=True))
    monkeypatch.undo()
    folded = part_mod.score_group(paths, detail=True)
    assert [d[:2] for d in folded.detail] == [d[:2] for d in part.detail]
    for a, b in zip(folded.detail, part.detail, strict=True):
        assert {n: v for n, v in a[2].items() if n != first.name} == {
            n: v for n, v in b[2].items() if n != first.name
        }
