"""The corruption RNG of the corrupted-state ablation (Appendix D.4): one draw
(protocol.corruption) shared by the gate arms and the Table 12 replay.

The arm's stream is pinned by a digest taken on main before the draw moved out of
runner/arms/gates.py (commit 82a1dcf): the same events, the same scores."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import msgspec
import pytest

from protocol.records import EpisodeRecord
from scoring.replay import score_episode

GRID = {
    "run": {
        "seeds": "100-103",
        "graphs": [{"steps": 15, "density": 0.3}],
        "arms": ["directive", "enforce"],
        "variants": [
            {"arm": "enforce", "corruption": 3e-2},
            {"arm": "directive", "corruption": 3e-2},
        ],
    },
    "models": [{"name": "scripted/synthetic?obey=0.9&fresh=0.35&seed=7"}],
}


async def _records(tmp: Path) -> list[EpisodeRecord]:
    from rich.console import Console

    from runner.cmd_run import run_async
    from runner.cmd_score import load_records
    from runner.grid import parse_grid

    await run_async(parse_grid(GRID), tmp, console=Console(file=io.StringIO()), live=False)
    records, _ = load_records(tmp)
    return sorted(records, key=lambda r: (r.cell.slug(), r.spec.seed))


def _digest(records: list[EpisodeRecord]) -> str:
    rows = []
    for r in records:
        s = score_episode(r)
        rows.append(
            [
                r.cell.slug(),
                r.spec.seed,
                msgspec.to_builtins(r.corruptions),
                [t.directive for t in r.turns],
                [[b.code for b in t.refused] for t in r.turns],
                s.primary.success,
                s.primary.channels,
            ]
        )
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[EpisodeRecord]:
    import asyncio

    return asyncio.run(_records(tmp_path_factory.mktemp("corrupt")))


def test_the_arm_draws_the_stream_it_drew_before(records: list[EpisodeRecord]) -> None:
    corrupted = [r for r in records if r.cell.knobs.corruption > 0]
    assert len(corrupted) == 8 and all(r.corruptions for r in corrupted)
    assert _digest(records) == "9a942339a9f60af841ab9be25af6365300c4e452e8f585c55196a9eb8bd50762"
