"""A tier-2 grid runs with its held-out cache (issue #12, "Tier 2 everywhere it applies")."""

from __future__ import annotations

import io
from pathlib import Path

import msgspec
import pytest
from rich.console import Console

from protocol.domains.known import POOLS
from runner.execution.grid_run import run_async
from runner.grid.expand import GridError, parse_grid
from runner.rundir.logs import read_logs
from scoring.replay.episode_score import score_episode
from scoring.replay.ground_truth import EpisodeCache


def _cache() -> dict[str, dict[str, list[list[str]]]]:
    return {
        t.slug: {
            kind: [
                [f"Held-out {tag} {i}.{r}: {t.text} ({{wo}})." for r in range(3)] for i in range(3)
            ]
            for kind, tag in (("asks", "ask"), ("redo_probes", "probe"))
        }
        for t in POOLS["procurement"].templates
    }


def _grid(cache: Path, arms: list[str]) -> dict[str, object]:
    return {
        "run": {
            "seeds": "100-103",
            "graphs": [{"steps": 10, "density": 0.15}],
            "arms": arms,
            "paraphrase_tier": 2,
            "paraphrase_cache": str(cache),
        },
        "models": [{"name": "scripted/perfect"}],
    }


def test_a_tier_2_grid_needs_a_usable_cache(tmp_path: Path) -> None:
    no_cache = {"run": {"paraphrase_tier": 2}, "models": [{"name": "m"}]}
    with pytest.raises(GridError, match="paraphrase cache"):
        parse_grid(no_cache)
    bad = _cache()
    del bad[POOLS["procurement"].templates[0].slug]
    path = tmp_path / "bad.json"
    path.write_bytes(msgspec.json.encode(bad))
    with pytest.raises(GridError, match="missing \\(every template of procurement"):
        parse_grid(_grid(path, ["raw"]))


async def test_a_tier_2_grid_runs_the_held_out_wordings(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    path.write_bytes(msgspec.json.encode(_cache()))
    grid = parse_grid(_grid(path, ["raw", "directive"]))
    await run_async(grid, tmp_path / "run", console=Console(file=io.StringIO()), live=False)
    records = read_logs(tmp_path / "run")
    assert len(records) == 8
    cache = EpisodeCache(grid.paraphrases())
    for rec in records.values():
        assert rec.cell.paraphrase_tier == 2 and rec.cell.slug().endswith("__tier2")
        rewritten = [t for t in rec.turns if t.kind in ("ask", "premature", "re_ask", "redo_probe")]
        assert rewritten and all(t.user_text.startswith("Held-out") for t in rewritten)
        score = score_episode(rec, cache.get(rec.spec))
        assert score.mismatches == () and score.primary.success, score.mismatches


def test_table_4s_three_wordings_run_as_cells_of_one_grid(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    path.write_bytes(msgspec.json.encode(_cache()))
    data = _grid(path, ["raw", "enforce"])
    data["run"]["wordings"] = [  # type: ignore[index]
        {},
        {"paraphrase_tier": 2},
        {"paraphrase_tier": 2, "ambiguous_rate": 0.15},
    ]
    grid = parse_grid(data)
    slugs = [c.slug() for c in grid.cells()]
    assert len(slugs) == len(set(slugs)) == 6
    assert {s.rsplit("__", 1)[-1] for s in slugs} == {"raw", "enforce", "tier2", "amb0.15"}
    tasks = list(grid.cells())
    assert {(c.paraphrase_tier, c.ambiguous_rate) for c in tasks} == {(0, 0.0), (2, 0.0), (2, 0.15)}
