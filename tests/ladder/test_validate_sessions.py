"""``ladder validate`` imports each arm's session (its row's class or ``"module:Class"`` path)
and checks it: an arm whose session does not import, or is no arm session, is one line and
exit 2, before any request is sent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol.arms.table import ARMS, ArmSpec

GRID = """
[run]
seeds = "100-101"
steps = [5]
density = [0.3]
arms = ["raw", "{arm}"]

[[models]]
name = "scripted/perfect"
"""


@pytest.fixture
def broken_arms() -> Iterator[None]:
    rows = (
        ArmSpec(name="gone", session="no_such_module_here:GoneArm"),
        ArmSpec(name="odd", session="protocol.arms.table:ArmSpec"),
    )
    for row in rows:
        ARMS.add(row.name, row)
    try:
        yield
    finally:
        for row in rows:
            ARMS.remove(row.name)


@pytest.mark.parametrize(
    ("arm", "says"),
    [("gone", "cannot import no_such_module_here"), ("odd", "is not a valid arm session")],
)
def test_a_broken_session_is_one_line(
    broken_arms: None, tmp_path: Path, arm: str, says: str
) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID.format(arm=arm), encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(grid), "--offline"])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and says in errors[0] and repr(arm) in errors[0]
    assert "Traceback" not in result.output


def test_working_sessions_pass(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID.format(arm="hybrid"), encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(grid), "--offline"])
    assert result.exit_code == 0, result.output
    assert "error" not in result.output
