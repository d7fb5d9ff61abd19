"""Every scripted policy carries the banner (#46), not only the synthetic agent."""

from __future__ import annotations

from protocol.records import CellKey
from scoring.report.markdown import synthetic_warning


def _cell(model: str, served_by: str = "") -> CellKey:
    return CellKey(model=model, served_by=served_by, steps=10, density=0.15, arm="raw")


def test_perfect_and_always_book_cells_carry_a_scripted_banner() -> None:
    lines = synthetic_warning(
        [_cell("scripted/perfect"), _cell("qwen3-235b", "scripted/always-book")]
    )
    assert lines[0] == "" and len(lines) == 2
    assert lines[1].startswith("> SCRIPTED: cells of ") and "`scripted/perfect`" in lines[1]
    assert "qwen3-235b" in lines[1] and "no claim about any model" in lines[1]


def test_the_synthetic_line_stays_first_and_a_real_model_has_none() -> None:
    both = synthetic_warning([_cell("scripted/perfect"), _cell("scripted/synthetic?seed=3")])
    assert both[1].startswith("> SYNTHETIC: ") and both[2].startswith("> SCRIPTED: ")
    assert synthetic_warning([_cell("qwen3-235b")]) == []


def test_the_terminal_banner_keeps_each_block_apart() -> None:
    """SYNTHETIC and SCRIPTED each start their own line in the terminal, with no Markdown
    quote marker left between them (#49: ``compare`` printed ``any model. > SCRIPTED:``)."""
    from scoring.report.markdown import synthetic_banner

    lines = synthetic_banner([_cell("scripted/perfect"), _cell("scripted/synthetic")])
    assert lines[0].startswith("SYNTHETIC: cells of scripted/synthetic ")
    heads = [x for x in lines if not x.startswith("  ")]
    assert len(heads) == 2 and heads[1].startswith("SCRIPTED: cells of scripted/perfect ")
    assert not any(">" in x or "`" in x for x in lines) and all(len(x) <= 80 for x in lines)
