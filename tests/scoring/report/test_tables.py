"""Report tables, the Markdown report and the figures, from result lines."""

from __future__ import annotations

import io

import pytest
from matplotlib.figure import Figure

from protocol.config import config_label
from protocol.records import CellKey, Knobs
from scoring.md_table import markdown_table
from scoring.report.markdown import figure_channels, figure_success, markdown_report
from scoring.report.tables import (
    channel_table,
    ladder_table,
    text_table,
)
from scoring.results.families import score_lines
from scoring.results.lines import ResultLine
from tests.scoring_records import Act, build, cell, episode, perfect, ref_line


@pytest.fixture(scope="module")
def lines() -> list[ResultLine]:
    from scoring.results.offline import score_records

    records = []
    for seed in range(3):
        ep = episode(seed=seed, steps=5)
        probe = next(t for t in ep.turns if t.kind == "redo_probe")
        assert probe.step is not None
        wrong = Act(ref_line(ep, probe.step, probe.work_order), refuse=(probe.step,))
        for arm in ("raw", "checklist", "enforce"):
            overrides = {probe.index: wrong} if arm != "checklist" or seed == 0 else {}
            key = cell(arm, ep.spec, notice="same_turn") if arm == "enforce" else cell(arm, ep.spec)
            records.append(build(ep, key, perfect(ep, overrides)))
    return score_lines(score_records(records))


def test_config_label_names_non_default_knobs() -> None:
    config = CellKey(model="m", regime="thinking", steps=10, density=0.3, domain="release",
                     brief="original", arm="", knobs=Knobs(notice="same_turn"))  # fmt: skip
    assert config_label(config) == "m thinking S=10 rho=0.3 release original notice=same_turn"


def test_ladder_table_lists_cells_and_contrasts(lines: list[ResultLine]) -> None:
    text = ladder_table(lines, "strict")
    assert "Strict success, primary scoring" in text
    assert "raw -> checklist" in text
    # The enforce cell has a knob the others lack: a configuration of its own, no contrast.
    assert "notice=same_turn" in text and "checklist -> enforce" not in text
    row = next(x for x in text.splitlines() if "  raw  " in x)
    assert "3/3" in row and "1.00" in row  # the gate-refused booking executed nothing


def test_channel_table_rates_and_false_completions(lines: list[ResultLine]) -> None:
    text = channel_table(lines)
    enforce = next(x for x in text.splitlines() if " enforce " in x)
    assert "3/3" in enforce  # three refused bookings, all bare lines: false completions
    raw = next(x for x in text.splitlines() if " raw " in x)
    assert "0.000 (0/6)" in raw  # refused, so no re-execution over 6 done turns


def test_text_and_markdown_tables() -> None:
    header, rows = ("a", "bb", "n"), [["x", "y", "1"], ["long", "z", "22"]]
    text = text_table(header, rows).splitlines()
    assert text[0] == "a     bb   n"
    assert text[3] == "long  z   22"
    assert markdown_table(header, rows).splitlines()[1] == "|---|---|---|"


def test_report_and_figures(lines: list[ResultLine]) -> None:
    md = markdown_report(lines, notes=["log lines: fine"], figures=[("Success", "s.png")])
    assert md.startswith("# state-ladder report")
    assert "## Error channels (Table 9 shape)" in md and "![Success](s.png)" in md
    for fig in (
        figure_success(lines),
        figure_success(lines, "decline_aware"),
        figure_channels(lines),
    ):
        assert isinstance(fig, Figure)
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        assert buf.getvalue()[:4] == b"\x89PNG"


def test_empty_results_render() -> None:
    assert "k/n" in ladder_table([], "strict")
    assert markdown_report([]).startswith("# state-ladder report")
    figure_success([])
    figure_channels([])
