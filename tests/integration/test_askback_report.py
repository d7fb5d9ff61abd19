"""The user's burden and the "Ask back and escalation" section (issue #38): measured from
the logged exchanges, in the cell line, `ladder cost`'s tables and the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runner.execution.live import format_result
from scoring.analyses.askback import ASKBACK, askback_lines, askback_parts
from scoring.analyses.cost import cost_rows
from scoring.analyses.registry import analysis_sections, log_analyses
from scoring.replay.askback import Burden, burden_of
from scoring.replay.episode_score import score_episode
from scoring.report.cost_table import cost_table
from scoring.results.cells import cell_line
from tests.runner.arms.test_askback_oracle import _cell, _grid, run

MODEL = "scripted/synthetic?matcher_wrong=0.1&matcher_none=0.05"


async def test_burden_in_the_cell_line_cost_and_report(tmp_path: Path) -> None:
    variants: list[dict[str, Any]] = [
        {"arm": "enforce", "ask": "second_reading"},
        {"arm": "enforce", "corruption": 1e-2},
        {"arm": "enforce", "corruption": 1e-2, "escalate": True},
    ]
    cells = await run(tmp_path, _grid(MODEL, ["enforce"], variants, seeds="100-115"))
    records = [r for recs in cells.values() for r in recs]
    asked = _cell(cells, arm="enforce", ask="second_reading")
    plain = _cell(cells, arm="enforce")
    escalated = _cell(cells, arm="enforce", corruption=1e-2, escalate=True)
    assert all(burden_of(r) is None for r in plain)

    # the burden, counted from the turns
    total = Burden()
    for r in asked:
        b = burden_of(r)
        assert b is not None
        assert b.questions == sum(t.question is not None for t in r.turns)
        assert b.escalations == 0
        total += b
    assert total.questions > 0 and total.recovered > 0
    assert total.recovered + total.unrecovered <= total.questions
    # the second reading (every routed turn) and each answer's reading: extra matcher requests
    assert total.extra_matcher_calls > total.questions and total.extra_tokens > 0
    esc = Burden()
    for r in escalated:
        b = burden_of(r)
        assert b is not None
        assert b.escalations == sum(len(t.escalations) for t in r.turns)
        assert b.overrides == sum(e.confirmed for t in r.turns for e in t.escalations)
        esc += b
    assert esc.overrides > 0

    # the cell line carries the sum and prints it
    line = cell_line(asked[0].cell, [score_episode(r) for r in asked])
    assert line.askback == total
    text = format_result(line)
    assert f"recovered {total.recovered} readings 0 bookings" in text
    assert f"{total.questions / len(asked):.2f} q/ep" in text
    assert cell_line(plain[0].cell, [score_episode(r) for r in plain]).askback is None
    assert "asked" not in format_result(cell_line(plain[0].cell, [score_episode(r) for r in plain]))

    # ladder cost: a burden table for the knobs' configurations only
    rows = cost_rows(records)
    assert [r.askback for r in rows if r.cell == asked[0].cell] == [total]
    table = cost_table(rows)
    assert table.count("The user's burden") == 2  # ask's configuration and escalate's
    assert "questions/ep" in table

    # the report section: each knob's cell beside its knobs-off reference
    pairs = [(r, score_episode(r)) for r in records]
    lines = askback_lines(askback_parts(pairs))
    by = {x.knobs: x for x in lines}
    assert set(by) == {"ask=second_reading", "escalate=True"}
    assert by["ask=second_reading"].shared == len(asked) == by["ask=second_reading"].episodes
    assert by["ask=second_reading"].reference_successes == sum(
        score_episode(r).primary.success for r in plain
    )
    assert by["escalate=True"].burden == esc
    section = "\n".join(analysis_sections(log_analyses(pairs), [ASKBACK]))
    assert "## Ask back and escalation" in section
    assert "ask=second_reading" in section and "escalate=True" in section


def test_the_reference_is_the_holm_familys_and_pure_cost_shows() -> None:
    """#46: show + ask is read against ask alone (its Holm family's reference), not against
    every knob off; a cell whose asks recovered nothing says so with its counts."""
    from protocol.records import CellKey, Knobs
    from scoring.analyses.askback import AskBackPart, askback_section
    from scoring.replay.askback import burden_text

    def cell(**knobs: Any) -> CellKey:
        return CellKey(model="m", steps=10, density=0.15, arm="enforce", knobs=Knobs(**knobs))

    seeds = range(16)
    off = AskBackPart(cell=cell(), wins={s: s < 4 for s in seeds}, burden=None)
    ask = AskBackPart(
        cell=cell(ask="unresolved"), wins={s: s < 12 for s in seeds}, burden=Burden(questions=9)
    )
    cost = Burden(questions=20, escalations=15)  # asked 35 times, recovered nothing
    both = AskBackPart(cell=cell(show=True, ask="unresolved"), wins=ask.wins, burden=cost)
    by = {x.knobs: x for x in askback_lines([off, ask, both])}
    assert by["show=True,ask=unresolved"].reference == "ask=unresolved"
    assert by["show=True,ask=unresolved"].reference_successes == 12  # ask alone, not 4
    assert by["ask=unresolved"].reference == "" and by["ask=unresolved"].reference_successes == 4
    text = "\n".join(askback_section(askback_lines([off, ask, both])))
    assert "12/16 [ask=unresolved]" in text and "4/16 [off]" in text
    assert "35 asked, 0 recovered" in text
    assert "35 asked, 0 recovered" in burden_text(cost, 16) and "n/a" not in burden_text(cost, 16)
