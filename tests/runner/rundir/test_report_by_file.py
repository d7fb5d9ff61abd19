"""``ladder report``'s workers score a group one cell's files at a time, as ``ladder
score``'s do (#50, seventh round): the parts they send back are those of the group read at
once (scores, helper lines, each cell's analyses' parts and cut replies, the stress-only parts
left out), and where a file's name hides a stressed cell the run still gets the serial
report."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import runner.rundir.rescore as rescore_mod
import runner.rundir.rescore_part as part_mod
from protocol.config import DEFAULT_DOSE
from protocol.records import CellKey, Knobs
from runner.rundir.logs import LogReport
from runner.rundir.rescore import scored_dir
from scoring.analyses.hybrid_counterfactual import HybridSeed
from scoring.analyses.registry import (
    STRESS_ONLY,
    finished_analyses,
    scored_once,
    stress_free,
)
from tests.stress_run_kit import styled_and_plain_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One configuration with user-style cells (stressed) beside their plain cells, one
    with no stressed cell, each configuration's logs in two folders."""
    styled = [{"arm": a, "user_style": "restate"} for a in ("raw", "enforce")]
    out = styled_and_plain_run(tmp_path_factory, styled)
    assert len(list((out / "logs").glob("*.jsonl"))) == 6
    return out


def _group(run_dir: Path, pattern: str) -> list[str]:
    return [str(p) for p in sorted((run_dir / "logs").glob(pattern))]


def _same(a: part_mod.Part, b: part_mod.Part) -> None:
    assert a.files == b.files
    assert a.scores == b.scores and list(a.scores) == list(b.scores)
    assert a.helpers == b.helpers and a.cells == b.cells
    assert a.detail == b.detail and a.skipped == b.skipped


@pytest.mark.parametrize("pattern", ["*S6*.jsonl", "*S10*.jsonl", "*.jsonl"])
def test_a_group_scored_by_file_sends_back_the_parts_of_the_group_read_at_once(
    run_dir: Path, pattern: str
) -> None:
    paths = _group(run_dir, pattern)
    by_file = part_mod._score_files(paths, detail=True)
    whole = part_mod._score_whole(paths, detail=True)
    assert by_file is not None
    _same(by_file, whole)
    assert len(by_file.detail) == len({c for _, c, _, _ in whole.detail}) == len(paths)
    if pattern == "*S6*.jsonl":  # no stressed cell: the stress-only parts left out
        assert by_file.skipped and all(stress_free(c) for c in by_file.skipped)
        assert all(d[2][name] == [] for d in by_file.detail for name in STRESS_ONLY)
    else:
        assert by_file.skipped == []
    assert part_mod.score_group(paths, detail=True).detail == whole.detail


def test_a_group_named_for_a_knob_computes_every_part_and_finishes_the_same(
    run_dir: Path, tmp_path: Path
) -> None:
    """Plain cells' files under names that read as knobbed: every part is computed (as the
    serial path does), and the analyses finish to the same tables."""
    plain = _group(run_dir, "*S6*.jsonl")
    renamed = []
    for p in plain:
        to = tmp_path / Path(p).name.replace(".jsonl", "__show=True.jsonl")
        shutil.copy(p, to)
        renamed.append(str(to))
    by_file = part_mod._score_files(renamed, detail=True)
    whole = part_mod._score_whole(plain, detail=True)
    assert by_file is not None and by_file.skipped == [] and whole.skipped
    assert [d[:2] for d in by_file.detail] == [d[:2] for d in whole.detail]
    finished = finished_analyses(d[2] for d in by_file.detail)
    assert finished.json() == finished_analyses(d[2] for d in whole.detail).json()


def test_a_stressed_cell_under_a_plain_name_gets_the_serial_report(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stressed cell's file renamed without its knobs: its group's plain batches leave out
    the stress-only parts it reads, and the parent's check sends the run to the serial path."""
    logs = tmp_path / "run" / "logs"
    logs.mkdir(parents=True)
    for p in (run_dir / "logs").glob("*.jsonl"):
        name = p.name.replace("__user_style=restate", "__styled")
        shutil.copy(p, logs / name)
    calls: list[int] = []
    once = scored_once

    def spy(*a: Any, **k: Any) -> Any:
        calls.append(1)
        return once(*a, **k)

    part = part_mod.score_group([str(p) for p in sorted(logs.glob("*S10*.jsonl"))], True)
    stressed = [c for _, c, _, _ in part.detail if not stress_free(c)]
    assert part.skipped and stressed and not rescore_mod._unread([part], stressed)
    monkeypatch.setattr(rescore_mod, "scored_once", spy)
    a, n = scored_dir(logs.parent, LogReport(), jobs=2, min_bytes=0)
    assert calls == [1] and n == 18  # the serial path
    b, m = scored_dir(run_dir, LogReport(), jobs=2, min_bytes=0)
    assert calls == [1]  # the workers' path, named as written
    assert (a.lines, a.analyses.json(), a.cuts, n) == (b.lines, b.analyses.json(), b.cuts, m)


_STRESS = st.fixed_dictionaries(
    {},
    optional={
        "spoof": st.sampled_from(["none", "checklist", "receipt", "redo"]),
        "spoof_dose": st.sampled_from([DEFAULT_DOSE, 0.5, 1.0]),
        "user_style": st.sampled_from(["cooperative", "restate", "double_plain"]),
        "user_dose": st.sampled_from([DEFAULT_DOSE, 0.1]),
        "tool_failure": st.sampled_from([0.0, 0.2]),
        "budget": st.integers(0, 3),
        "expiry": st.integers(0, 3),
        "sessions": st.integers(0, 3),
        "handoff": st.sampled_from(["none", "note", "arm"]),
        "next_model": st.sampled_from(["", "other"]),
        "exclusive": st.integers(0, 2),
        "show": st.booleans(),
        "corruption": st.sampled_from([0.0, 0.03]),
    },
)


@given(_STRESS)
def test_a_stressed_cell_is_named_for_a_knob(knobs: dict[str, Any]) -> None:
    """The workers' reading of a group's names (``_plain_names``) never calls a stressed
    cell's file plain: its slug names a knob set."""
    cell = CellKey(model="m", steps=6, density=0.3, arm="raw", knobs=Knobs(**knobs))
    name = f"{cell.slug()}.jsonl"
    assert stress_free(cell) or not part_mod._plain_names([f"/run/logs/{name}"])
    assert part_mod._plain_names([f"/run/logs/{name}"]) == (not Knobs(**knobs).changed())


def test_a_cells_hybrid_seeds_share_one_enforcement_key(run_dir: Path) -> None:
    """The hybrid's per-seed summaries name their configuration's enforcement cell by one
    object per cell (a worker's part pickles it once), equal to the cell made per seed."""
    part = part_mod.score_group(_group(run_dir, "*S6*.jsonl"), detail=True)
    seeds = [h for d in part.detail for h in d[2]["hybrid"] if isinstance(h, HybridSeed)]
    assert seeds and len(seeds) == sum(len(d[2]["hybrid"]) for d in part.detail)
    assert {h.arm for h in seeds} == {"enforce"}
    for _, cell, _, _ in part.detail:
        mine = [h for h in seeds if h.key == msgspec.structs.replace(cell, arm="enforce")]
        assert len({id(h.key) for h in mine}) <= 1
    assert len({id(h.key) for h in seeds}) == 1 and len(seeds) == 3
