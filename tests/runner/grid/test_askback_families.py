"""The ask-back grids' Holm families (issue #38; docs/scoring.md, "Holm families"): each
knob's cell against the same cell with that knob alone off, within model, in one family
named "Ask back and escalation"; the wording and corruption families they also feed."""

from __future__ import annotations

from tests.runner.grid.test_families_grids import _families, _grid_inputs  # noqa: F401

FAMILY = "Ask back and escalation contrasts"


def test_askback_wording_grid_families() -> None:
    families = _families("askback-wording.toml")
    # 3 wordings x 2 gates x 4 knob cells, in one family within model
    assert families[f"{FAMILY} | qwen3-235b"] == 24
    # Table 4's wording families (the two gates per stress), one per knob setting and stress
    wording = {k: v for k, v in families.items() if k.startswith("Table 4 wording")}
    assert len(wording) == 5 * 2 and set(wording.values()) == {2}
    # the two plain gates are adjacent rungs: one ladder contrast per wording
    assert families["Table 15 ladder | qwen3-235b no-think"] == 1
    assert families["Table 4 ladder | qwen3-235b no-think"] == 2
    assert sum(families.values()) == 24 + 20 + 3


def test_askback_escalate_grid_families() -> None:
    families = _families("askback-escalate.toml")
    # per model: enforce, hybrid and the three corrupted gates, each with escalate
    assert families[f"{FAMILY} | qwen3-235b"] == 5
    assert families[f"{FAMILY} | qwen3.6-35b"] == 5
    # the corruption rates against the plain gate (Table 12), the hybrid against it (D.3)
    assert families["Table 12 contrasts | qwen3.6-35b"] == 3
    assert families["Appendix D.3 contrasts | qwen3-235b"] == 1
    assert sum(families.values()) == 2 * (5 + 3 + 1)
