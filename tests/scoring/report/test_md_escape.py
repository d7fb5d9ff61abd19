"""Names in report.md are shown, never obeyed (#47): a model name holding HTML or a table's
pipe is escaped in every table and in the configurations list."""

from __future__ import annotations

from scoring.md_table import markdown_table, md_text


def test_a_name_cannot_open_a_tag_or_split_a_cell() -> None:
    table = markdown_table(["model", "n"], [["<script>alert(1)</script>", "a|b\nc"]])
    row = table.splitlines()[2]
    assert "<script>" not in table and "&lt;script>alert(1)&lt;/script>" in row
    assert row.endswith("| a\\|b c |") and len(table.splitlines()) == 3
    assert md_text("raw -> directive [INERT: x]") == "raw -> directive [INERT: x]"
