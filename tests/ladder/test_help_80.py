"""Help readable at 80 columns (#40, items 6 and 9): click's plain help, every line within
80 columns, option names whole, paragraphs rewrapped (no line cut where the docstring broke),
and no ``<bool>`` placeholder on a flag."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from ladder.app import app

COMMANDS = [
    [],
    ["generate"],
    ["run"],
    ["validate"],
    ["demo"],
    ["cost"],
    ["score"],
    ["report"],
    ["paraphrase"],
    ["show"],
    ["view"],
    ["probe"],
    ["serve", "scripted"],
    ["serve", "vllm"],
    ["domain", "check"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "ladder")
def test_help_fits_80_columns(command: list[str]) -> None:
    result = CliRunner().invoke(app, [*command, "-h"], env={"COLUMNS": "80"}, terminal_width=80)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines and all(len(x) <= 80 for x in lines), [x for x in lines if len(x) > 80]
    assert "<bool>" not in result.output and "…" not in result.output
    assert not any(x.startswith(("╭", "│")) for x in lines)  # no rich box
    # the description's paragraphs are rewrapped to the width: every line but a paragraph's
    # last is nearly full (the rich help kept the docstring's breaks: "it;" alone on a line)
    description = result.output.split("\n\n", 1)[1].split("\nArguments:", 1)[0]
    description = description.split("\nOptions:", 1)[0]
    for paragraph in description.split("\n\n"):
        rows = paragraph.splitlines()
        assert all(len(x) >= 60 for x in rows[:-1]), rows


def test_run_help_names_the_flags_whole() -> None:
    result = CliRunner().invoke(app, ["run", "-h"], env={"COLUMNS": "80"}, terminal_width=80)
    assert (
        "  --allow-grid-change " in result.output and "--no-allow-grid-change" not in result.output
    )
    assert "  --no-live " in result.output
