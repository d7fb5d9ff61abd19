"""Every shipped grid validates (the `ladder validate --offline` path) and holds the cells of
the table its comment names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.grid.expand import Grid, GridError, load_grid, parse_grid

GRIDS = Path(__file__).resolve().parent.parent.parent.parent / "runner" / "grids"


def test_every_grid_names_the_table_it_feeds() -> None:
    for path in sorted(GRIDS.glob("*.toml")):
        head = path.read_text().split("\n[", 1)[0]
        if path.name == "demo.toml":
            continue
        assert "Table" in head, f"{path.name} says in no comment which table it feeds"


@pytest.mark.parametrize(
    "name",
    [
        "paper",
        "original",
        "qwen3.6-35b",
        "rendering",
        "rendering-qwen3.6-35b",
        "release",
        "corruption",
        "notice",
        "budget",
        "expiry",
        "sessions",
        "sessions-handoff",
        "sessions-harness",
    ],
)
def test_grid_validates_offline(name: str) -> None:
    from ladder.app import app

    result = CliRunner().invoke(app, ["validate", "--offline", str(GRIDS / f"{name}.toml")])
    assert result.exit_code == 0, result.output
    assert "cells" in result.output


def test_amended_grid_table_15() -> None:
    grid = load_grid(GRIDS / "paper.toml")
    assert grid.seeds() == list(range(100, 228))
    assert sorted(grid.graphs()) == [(5, 0.15), (10, 0.15), (15, 0.15), (15, 0.3), (18, 0.15)]
    assert {c.brief for c in grid.cells()} == {"amended"}
    assert {(c.model, c.regime) for c in grid.cells()} == {
        ("qwen3-235b", "no-think"),
        ("qwen3-235b-thinking", "thinking"),
    }
    assert len(grid.cells()) == 2 * 5 * 4


def test_original_grid_and_schedule_control_tables_13_14() -> None:
    grid = load_grid(GRIDS / "original.toml")
    cells = grid.cells()
    assert grid.seeds() == list(range(100, 228))
    assert {c.brief for c in cells} == {"original"}
    assert {c.schedule for c in cells} == {"earlier", "regenerated"}
    assert sorted(grid.graphs()) == [(5, 0.15), (10, 0.15), (15, 0.15), (15, 0.3), (18, 0.15)]
    assert {c.regime for c in cells} == {"no-think", "thinking"}
    assert len(cells) == 2 * 5 * 2 * 4
    # the thinking checkpoint compiles with the no-think one (Appendix B.3)
    assert grid.model("qwen3-235b-thinking").compile_model == "qwen3-235b"


def test_model_axis_grids() -> None:
    from serve.recipes import RECIPES

    qwen = load_grid(GRIDS / "qwen3.6-35b.toml")
    assert qwen.seeds() == list(range(100, 228))
    (m,) = qwen.models
    assert m.served_name() == RECIPES["qwen3.6-35b"].served_name
    assert m.request_extra() == RECIPES["qwen3.6-35b"].regime_body["no-think"]
    assert {c.regime for c in qwen.cells()} == {"no-think"}
    assert sorted(qwen.graphs()) == [(10, 0.15), (15, 0.3)]


def test_deepseek_grid_needs_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from serve.recipes import RECIPES

    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(GridError, match="DEEPSEEK_API_KEY"):
        load_grid(GRIDS / "deepseek-v4-pro.toml")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-a-secret")
    grid = load_grid(GRIDS / "deepseek-v4-pro.toml")
    recipe = RECIPES["deepseek-v4-pro"]
    assert grid.seeds() == list(range(100, 132))
    assert grid.graphs() == [(15, 0.3)]
    for m in grid.models:
        assert m.served_name() == recipe.served_name
        assert m.request_extra() == recipe.regime_body[m.regime]
    assert grid.endpoint("deepseek").base_url == recipe.base_url
    assert {(c.brief, c.schedule) for c in grid.cells()} == {
        (b, s) for b in ("original", "amended") for s in ("earlier", "regenerated")
    }


def _variants(grid: Grid) -> set[tuple[str, str, str, bool, float]]:
    return {
        (c.arm, c.knobs.checklist_mode, c.knobs.directive_role, c.knobs.matched_step_line,
         c.knobs.corruption)
        for c in grid.cells()
    }  # fmt: skip


def test_rendering_grids_table_16() -> None:
    expected = {
        ("checklist", "append", "user", False, 0.0),
        ("ledger", "append", "user", False, 0.0),
        ("directive", "append", "user", False, 0.0),
        ("enforce", "append", "user", False, 0.0),
        ("checklist", "replace", "user", False, 0.0),
        ("directive", "append", "user", True, 0.0),
        ("directive", "append", "system", False, 0.0),
        ("enforce", "append", "system", False, 0.0),
    }
    big = load_grid(GRIDS / "rendering.toml")
    small = load_grid(GRIDS / "rendering-qwen3.6-35b.toml")
    assert _variants(big) == _variants(small) == expected
    assert sorted(big.graphs()) == [(10, 0.15), (15, 0.3)] and small.graphs() == [(15, 0.3)]
    assert {m.name for m in big.models} == {"qwen3-235b"}
    assert {m.name for m in small.models} == {"qwen3.6-35b"}
    assert big.seeds() == small.seeds() == list(range(100, 228))


def test_release_grid_table_17() -> None:
    grid = load_grid(GRIDS / "release.toml")
    assert {c.domain for c in grid.cells()} == {"release"}
    assert grid.graphs() == [(15, 0.3)] and grid.seeds() == list(range(100, 228))
    assert [c.arm for c in grid.cells()] == ["raw", "checklist", "directive", "enforce"]


def test_corruption_grid_table_12() -> None:
    grid = load_grid(GRIDS / "corruption.toml")
    assert grid.seeds() == list(range(100, 164))
    assert sorted(c.knobs.corruption for c in grid.cells()) == [0.0, 1e-3, 3e-3, 1e-2]
    assert {c.arm for c in grid.cells()} == {"enforce"}
    assert grid.graphs() == [(15, 0.3)]


def test_wording_grid_table_4(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The grid names a cache that `ladder paraphrase` writes; without it the grid is
    refused with one line naming the file, with it it validates."""
    from protocol.domains.known import PROCUREMENT

    monkeypatch.chdir(tmp_path)
    with pytest.raises(GridError, match=r"paraphrase_cache\.json"):
        load_grid(GRIDS / "wording.toml")
    (tmp_path / "runs").mkdir()
    cache = {
        t.slug: {
            kind: [
                [
                    f"{variant} {t.text} ({kind} {i}) {{wo}}"
                    for variant in ("Please", "Kindly", "Now")
                ]
                for i in range(3)
            ]
            for kind in ("asks", "redo_probes")
        }
        for t in PROCUREMENT.templates
    }
    (tmp_path / "runs" / "paraphrase_cache.json").write_text(json.dumps(cache))
    grid = load_grid(GRIDS / "wording.toml")
    assert grid.seeds() == list(range(100, 164))
    assert {(c.paraphrase_tier, c.ambiguous_rate) for c in grid.cells()} == {
        (0, 0.0),
        (2, 0.0),
        (2, 0.15),
    }
    assert len(grid.cells()) == 3 * 4


def test_notice_grid_table_9() -> None:
    grid = load_grid(GRIDS / "notice.toml")
    assert {(c.model, c.knobs.notice) for c in grid.cells()} == {
        (m, n) for m in ("qwen3-235b", "qwen3.6-35b") for n in ("next_turn", "same_turn")
    }
    assert grid.graphs() == [(15, 0.3)] and grid.seeds() == list(range(100, 228))


def test_the_example_figures_grid_validates() -> None:
    grid = load_grid(GRIDS.parent.parent / "docs" / "figures" / "synthetic.toml")
    assert len(grid.cells()) == 2 * 2 * 2 * 7 and grid.seeds() == list(range(100, 116))


def test_budget_grid_sweeps_every_arm_at_three_caps_on_generator_6() -> None:
    """Issue #48: each arm of the ladder and the self-ledger at caps 1-3 beside its control."""
    grid = load_grid(GRIDS / "budget.toml", need_keys=False)
    assert grid.run.generator == 6
    arms = ["raw", "checklist", "directive", "enforce", "ledger"]
    assert list(grid.run.arms) == arms
    assert sorted((v.arm, v.budget) for v in grid.run.variants) == sorted(
        (a, c) for a in arms for c in (1, 2, 3)
    )


def test_expiry_grid_sweeps_every_arm_at_two_validities_on_generator_6() -> None:
    grid = load_grid(GRIDS / "expiry.toml", need_keys=False)
    assert grid.run.generator == 6
    arms = ["raw", "checklist", "directive", "enforce", "ledger"]
    assert sorted((v.arm, v.expiry) for v in grid.run.variants) == sorted(
        (a, t) for a in arms for t in (6, 12)
    )


def test_sessions_grid_sets_every_handoff_on_every_arm_on_generator_6() -> None:
    """Issue #48: each arm of the ladder and the self-ledger, three sessions, each handoff."""
    grid = load_grid(GRIDS / "sessions.toml", need_keys=False)
    assert grid.run.generator == 6
    arms = ["raw", "checklist", "directive", "enforce", "ledger"]
    assert list(grid.run.arms) == arms
    assert sorted((v.arm, v.sessions, v.handoff) for v in grid.run.variants) == sorted(
        (a, 3, h) for a in arms for h in ("none", "note", "arm")
    )


def test_next_model_must_name_a_model_of_the_grid() -> None:
    """Issue #48's handoff between agents: the other session's model is one of the grid's."""
    grid = {
        "run": {
            "seeds": "100",
            "generator": 6,
            "arms": ["raw"],
            "variants": [{"arm": "raw", "sessions": 2, "next_model": "scripted/nobody"}],
        },
        "models": [{"name": "scripted/perfect"}],
    }
    with pytest.raises(GridError, match="next_model 'scripted/nobody' is not a model of the grid"):
        parse_grid(grid)
