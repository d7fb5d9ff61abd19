"""Tables 11, 10, 4, 12 and Appendix D.3 declared per pair (``Fold``, #50, tenth round): what
each episode gives is small (no record, score or turn kept), a pair the table does not read
gives nothing, and the batch's parts are the table's public function's."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol.records import CellKey, EpisodeRecord
from scoring.analyses.base import Analysis, Fold, Pair
from scoring.analyses.corruption_replay import CORRUPTION, corruption_lines
from scoring.analyses.hybrid_counterfactual import HYBRID, hybrid_seeds
from scoring.analyses.obedience import OBEDIENCE, obedience_lines
from scoring.analyses.omission_attribution import OMISSION_ATTRIBUTION, attribution_lines
from scoring.analyses.wording_columns import WORDING, wording_lines
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.offline import score_records

# gates with a defective compiler and matcher (over-blocks, misroutes, flagged compiles),
# corrupted state and ambiguous probes: every one of the five tables has lines
GRID = {
    "run": {
        "seeds": "100-103",
        "generator": 3,
        "graphs": [{"steps": 15, "density": 0.3}],
        "arms": ["raw", "directive", "enforce"],
        "wordings": [{"paraphrase_tier": 0, "ambiguous_rate": 0.15}],
        "variants": [
            {"arm": "enforce", "corruption": 5e-2},
            {"arm": "directive", "corruption": 5e-2},
        ],
    },
    "models": [
        {
            "name": "scripted/synthetic?obey=0.8&fresh=0.4&seed=5&matcher_wrong=0.15"
            "&compile_empty_code=0.3&compile_cancel_left=0.3"
        }
    ],
}
TABLES: tuple[Analysis[Any, Any], ...] = (
    OBEDIENCE, OMISSION_ATTRIBUTION, WORDING, CORRUPTION, HYBRID)  # fmt: skip


async def _records(tmp: Path) -> list[EpisodeRecord]:
    from rich.console import Console

    from runner.execution.grid_run import run_async
    from runner.grid.expand import parse_grid
    from runner.rundir.records import load_records

    await run_async(parse_grid(GRID), tmp, console=Console(file=io.StringIO()), live=False)
    return load_records(tmp)[0]


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> list[Pair]:
    records = asyncio.run(_records(tmp_path_factory.mktemp("folds")))
    scores = score_records(records, EpisodeCache(), detail=True)
    return list(zip(records, scores, strict=True))


def _small(value: object) -> bool:
    if isinstance(value, tuple):
        return all(map(_small, value))
    return value is None or isinstance(value, (bool, int, str, CellKey))


def test_each_gives_small_values_and_nothing_for_an_uncounted_pair(pairs: list[Pair]) -> None:
    cache = EpisodeCache()
    for table in TABLES:
        fold = table.compute
        assert isinstance(fold, Fold), table.name
        values = [fold.each(p, cache) for p in pairs]
        assert any(v is not None for v in values), table.name
        assert all(map(_small, values)), table.name
        for record, score in pairs:  # an infrastructure error is never counted
            lost = msgspec.structs.replace(score, infrastructure=True)
            assert fold.each((record, lost), cache) is None, table.name


def test_the_folds_are_the_public_functions(pairs: list[Pair]) -> None:
    cache = EpisodeCache()
    cells: dict[CellKey, list[Pair]] = {}
    for p in pairs:
        cells.setdefault(p[0].cell, []).append(p)
    public: dict[str, Callable[[list[Pair]], Sequence[object]]] = {
        "obedience": lambda b: obedience_lines(b),
        "omission_attribution": lambda b: attribution_lines(b, cache),
        "wording": lambda b: wording_lines(b),
        "corruption": lambda b: corruption_lines(b, cache),
        "hybrid": lambda b: hybrid_seeds(b, cache),
    }
    for table in TABLES:
        parts = [x for b in cells.values() for x in table.compute(b, cache)]
        assert parts, table.name
        assert parts == [x for b in cells.values() for x in public[table.name](b)], table.name
        # several cells in one batch (a direct call's): the same lines
        assert table.finish(parts) == table.finish(list(table.compute(pairs, cache)))
