"""The report's Markdown sections made from result lines (pure): the ladder tables under
both scorings with their contrasts and pass^k, the channel table, the gate helpers and the
gate activity. Split from :func:`scoring.report.markdown.markdown_report` (issue #45, sizes),
which puts them in this order; each table names configurations by the report's list numbers
(:class:`scoring.report.tables.Labels`, #40)."""

from __future__ import annotations

from collections.abc import Sequence

from scoring.md_table import markdown_table
from scoring.report.gate_tables import (
    GATE_HEADER,
    HELPERS_HEADER,
    gate_activity_rows,
    helper_rows,
)
from scoring.report.tables import (
    CHANNEL_HEADER,
    CONTRAST_HEADER,
    INERT_TITLE,
    LADDER_HEADER,
    PASS_K_NOTE,
    Labels,
    channel_rows,
    contrast_rows,
    inert_lines,
    ladder_rows,
    pass_k_header,
    pass_k_rows,
)
from scoring.results.lines import ResultLine

__all__ = ["channel_section", "gate_sections", "ladder_sections", "numbered_header"]


def numbered_header(header: Sequence[str]) -> tuple[str, ...]:
    """A table's header with its first column the configuration's number (the list above)."""
    return ("cfg", *header[1:])


def ladder_sections(lines: Sequence[ResultLine], labels: Labels) -> list[str]:
    """Per scoring (primary, decline-aware): the ladder table, its contrasts and, with
    repeated trials, pass^k."""
    out: list[str] = []
    for scoring, name in (("strict", "primary scoring"), ("decline_aware", "decline-aware")):
        out += [
            "",
            f"## Strict success, {name}",
            "",
            markdown_table(numbered_header(LADDER_HEADER), ladder_rows(lines, scoring, labels)),
        ]
        rows = contrast_rows(lines, scoring, labels)
        if rows:
            out += [
                "",
                f"Contrasts ({name}): exact McNemar on shared seeds; Holm within each paper "
                "table's family (`ladder score` lists them; docs/scoring.md).",
                "",
                markdown_table(numbered_header(CONTRAST_HEADER), rows),
            ]
        tried = pass_k_rows(lines, scoring, labels)
        if tried:  # repeated trials (--trials K, #40)
            out += [
                "",
                f"pass^k ({name}): {PASS_K_NOTE.split(': ', 1)[1]}.",
                "",
                markdown_table(numbered_header(pass_k_header(lines, labels)), tried),
            ]
    return out


def channel_section(lines: Sequence[ResultLine], labels: Labels) -> list[str]:
    """The channel table (Table 9 shape)."""
    return [
        "",
        "## Error channels (Table 9 shape)",
        "",
        "Errors over the turns carrying the channel's label; unrequested executions as a "
        "count; false completions over refused bookings.",
        "",
        markdown_table(numbered_header(CHANNEL_HEADER), channel_rows(lines, labels)),
    ]


def gate_sections(lines: Sequence[ResultLine], labels: Labels) -> list[str]:
    """The gate helpers and the gate activity, each when a gate cell ran, then the inert
    cells."""
    out: list[str] = []
    helpers = helper_rows(lines, labels)
    if helpers:
        out += [
            "",
            "## Gate helpers (Tables 5 and 11 shapes)",
            "",
            "Compile accuracy against the generator graph (flagged: episodes the ground-truth-"
            "free validator flags); matcher step agreement and explicit-redo precision / recall.",
            "",
            markdown_table(numbered_header(HELPERS_HEADER), helpers),
        ]
    gates = gate_activity_rows(lines, labels)
    if gates:
        out += [
            "",
            "## Gate activity",
            "",
            "Whether each gate gated: compiles failed / empty / validator-flagged, matcher "
            "answers malformed after the correction request (of turns consulted), directives "
            "and rejection notices shown. A cell whose gate never acted (or whose every compile "
            "failed) is INERT: it measures no gate, and its contrasts are marked INERT.",
            "",
            markdown_table(numbered_header(GATE_HEADER), gates),
        ]
        inert = inert_lines(lines)
        if inert:
            out += ["", INERT_TITLE, "", *(f"- {x}" for x in inert)]
    return out
