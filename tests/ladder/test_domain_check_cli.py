"""``ladder domain check`` on a file that is not there (#40, item 9): one ``error:`` line,
exit 2 (a usage error), not "1 problems" and exit 1."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from ladder.app import app


def test_a_missing_pack_is_one_error_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["domain", "check", str(tmp_path / "none.toml")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: cannot read domain pack {tmp_path / 'none.toml'}: no such file"
    ]


def test_problems_are_counted_in_the_right_number(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("name = ", encoding="utf-8")
    result = CliRunner().invoke(app, ["domain", "check", str(bad)])
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == f"error: {bad}: 1 problem"
