"""The analyses' tables in report.md name configurations by number, as the report's
ladder tables do (#40, 80 columns)."""

from __future__ import annotations

from protocol.config import config_label
from protocol.records import CellKey
from scoring.md_table import markdown_table
from scoring.report.markdown import numbered_sections
from scoring.report.tables import Labels

A = CellKey(model="m", regime="no-think", steps=5, density=0.15, domain="procurement",
            brief="amended", arm="raw")  # fmt: skip
B = CellKey(model="m", regime="no-think", steps=10, density=0.15, domain="procurement",
            brief="amended", arm="raw")  # fmt: skip


def test_a_configuration_cell_becomes_its_number_and_the_rest_stays() -> None:
    labels = Labels([A, B])
    a, b = (f"#{labels.numbers[config_label(x)]}" for x in (A, B))
    table = markdown_table(
        ["arm", "configuration", "note"],
        [["raw", config_label(A), "kept"], ["raw", config_label(B), config_label(A) + " x"]],
    )
    text = ["", "## A section", "", "Prose naming " + config_label(A) + ".", "", table]
    out = numbered_sections(text, labels)
    assert out[:5] == text[:5]
    assert out[5:] == [
        "| arm | cfg | note |",
        "|---|---|---|",
        f"| raw | {a} | kept |",
        f"| raw | {b} | {config_label(A)} x |",  # only whole cells are replaced
    ]
    assert numbered_sections(text, Labels([A, B], wide=True)) == "\n".join(text).split("\n")


def test_a_column_partly_numbered_keeps_its_header() -> None:
    table = markdown_table(["configuration"], [[config_label(A)], ["another"]])
    out = numbered_sections([table], Labels([A]))
    assert out == ["| configuration |", "|---|", "| #1 |", "| another |"]
