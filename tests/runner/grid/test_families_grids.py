"""Holm families as the paper forms them (issue #27), one test per shipped grid: each
family is named by the table it feeds and has the paper's size."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from protocol.domains.known import PROCUREMENT
from runner.grid.expand import load_grid
from scoring.replay.episode_score import EpisodeScore, Scoring
from scoring.results.families import describe_families, score_lines
from scoring.results.lines import ContrastLine

GRIDS = Path(__file__).parent.parent.parent.parent / "runner" / "grids"


def _scoring(ok: bool) -> Scoring:
    return Scoring(success=ok, channels={}, labels={}, turns_ok=0, n_turns=0, turns=())


def _families(name: str) -> Counter[str]:
    grid = load_grid(GRIDS / name)
    scores = [
        EpisodeScore(
            cell=key,
            seed=seed,
            termination="completed",
            infrastructure=False,
            scorable=True,
            primary=_scoring(seed % 2 == 0),
            decline_aware=_scoring(True),
            refused=0,
            false_completions=0,
            citations=0,
            redisplays=0,
            unknown=0,
            admitted_diffs=0,
            mismatches=(),
        )
        for key in grid.cells()
        for seed in range(2)
    ]
    lines = score_lines(scores)
    by_scoring = {
        scoring: Counter(
            c.family for c in lines if isinstance(c, ContrastLine) and c.scoring == scoring
        )
        for scoring in ("strict", "decline_aware")
    }
    assert by_scoring["strict"] == by_scoring["decline_aware"]  # one family set per scoring
    text = describe_families(lines)
    for family, n in by_scoring["strict"].items():
        assert f"  {family}: {n} contrast{'' if n == 1 else 's'}\n" in text + "\n"
    return Counter({str(k): v for k, v in by_scoring["strict"].items()})


@pytest.fixture(autouse=True)
def _grid_inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The DeepSeek grid's key and the wording grid's cache, as their own tests give them."""
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-a-secret")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    cache = {
        t.slug: {
            kind: [
                [f"{v} {t.text} ({kind} {i}) {{wo}}" for v in ("Please", "Kindly", "Now")]
                for i in range(3)
            ]
            for kind in ("asks", "redo_probes")
        }
        for t in PROCUREMENT.templates
    }
    (tmp_path / "runs" / "paraphrase_cache.json").write_text(json.dumps(cache))


# Three adjacent contrasts per complete ladder of four rungs (E.1: "three of the fifteen
# adjacent contrasts ... over the five thinking cells"), per configuration and scoring.
def test_paper_grid_table_15_five_cells_per_regime() -> None:
    assert _families("paper.toml") == {
        "Table 15 ladder | qwen3-235b no-think": 5 * 3,
        "Table 15 ladder | qwen3-235b-thinking thinking": 5 * 3,  # "the five thinking cells"
    }


def test_original_grid_table_8_apart_from_its_schedule_control() -> None:
    assert _families("original.toml") == {
        # D.1: "over all adjacent contrasts within a scoring": both regimes, five graphs.
        "Table 8 ladder | every model": 2 * 5 * 3,
        "Table 14 ladder | qwen3-235b no-think": 5 * 3,
        "Table 14 ladder | qwen3-235b-thinking thinking": 5 * 3,
        # Schedule contrasts join the model's two regimes (its -thinking name included).
        "Table 14 brief and schedule | qwen3-235b": 2 * 5 * 4,
    }


def test_release_grid_table_17_three_contrasts() -> None:
    assert _families("release.toml") == {"Table 17 ladder | qwen3-235b no-think": 3}


def test_rendering_grid_table_16_ten_variant_contrasts() -> None:
    families = _families("rendering.toml")
    assert families["Table 16 contrasts | qwen3-235b"] == 10  # "ten at Qwen3-235B"
    # The rendering grid runs no raw arm: checklist -> directive -> enforce per graph, no
    # two-rung variant configuration (directive and enforce in the system role) as a ladder.
    assert families["Table 15 ladder | qwen3-235b no-think"] == 2 * 2
    assert families["Section 5.2 contrasts | qwen3-235b"] == 2 * 2
    assert sum(families.values()) == 18


def test_rendering_grid_at_qwen3_6_35b() -> None:
    # Five variant contrasts on one graph (the paper says four at Qwen3.6-35B; docs/scoring.md).
    assert _families("rendering-qwen3.6-35b.toml")["Table 16 contrasts | qwen3.6-35b"] == 5


def test_model_axis_grids() -> None:
    assert _families("qwen3.6-35b.toml") == {
        "Table 15 ladder | qwen3.6-35b no-think": 2 * 3,
        "Table 8 ladder | every model": 2 * 3,
    }
    deepseek = _families("deepseek-v4-pro.toml")
    assert deepseek["Table 8 ladder | every model"] == 2 * 3
    assert deepseek["Table 15 ladder | deepseek-v4-pro no-think"] == 3
    assert deepseek["Table 14 brief and schedule | deepseek-v4-pro"] == 2 * 4 * 4


def test_wording_grid_table_4_four_arms_per_stress() -> None:
    families = _families("wording.toml")
    wording = {k: v for k, v in families.items() if k.startswith("Table 4 wording")}
    assert sorted(wording.values()) == [4, 4]  # "Holm over the four arms", per stress
    assert families["Table 15 ladder | qwen3-235b no-think"] == 3
    assert families["Table 4 ladder | qwen3-235b no-think"] == 2 * 3


def test_side_and_variant_grids() -> None:
    assert _families("corruption.toml") == {"Table 12 contrasts | qwen3-235b": 3}
    assert _families("notice.toml") == {
        "Appendix D.3 contrasts | qwen3-235b": 1,
        "Appendix D.3 contrasts | qwen3.6-35b": 1,
    }
    tools = _families("tools.toml")
    assert tools["Table 19 ladder | qwen3-235b no-think"] == 3
    assert tools["Table 19 contrasts | qwen3-235b"] == 1  # request- against state-bound
    memory = _families("memory.toml")
    assert memory["Table 16 contrasts | qwen3-235b"] == 2 * 2
    assert memory["Table 18 contrasts | qwen3-235b"] == 2 * 2
    demo = _families("demo.toml")
    assert sum(demo.values()) == 3 + 2 + 1
