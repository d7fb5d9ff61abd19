"""The gate cells' plain-text (and Markdown) tables from the helpers lines.

Split from :mod:`scoring.report.tables` (issue #45, sizes), built the same way from the typed
result lines of :mod:`scoring.results.lines`:

* The gate helpers table (Tables 5 and 11 shapes): per gate cell, compile accuracy against
  the generator and matcher agreement / explicit-redo precision and recall.
* The gate activity table: per gate cell, compiles failed / empty / validator-flagged,
  matcher answers malformed, directives and notices shown, and whether the gate acted; then
  one line per inert cell saying why.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence

from scoring.report.tables import (
    INERT_TITLE,
    WIDE,
    Labels,
    inert_lines,
    labelled_header,
    rate_text,
    text_table,
)
from scoring.results.lines import HelperLine, ResultLine

__all__ = [
    "GATE_HEADER",
    "HELPERS_HEADER",
    "NARROW_GATE_HEADER",
    "gate_activity_rows",
    "gate_activity_table",
    "helper_rows",
    "helper_table",
]


HELPERS_HEADER = (
    "configuration",
    "arm",
    "compiled",
    "dep",
    "code",
    "cancel",
    "rewire",
    "relax",
    "flagged",
    "matcher agree",
    "redo P",
    "redo R",
    "matcher calls (cached)",
    "answers malformed (corrected)",
)


def helper_rows(lines: Iterable[ResultLine], labels: Labels = WIDE) -> list[list[str]]:
    rows = []
    helpers = [x for x in lines if isinstance(x, HelperLine)]
    for h in sorted(helpers, key=lambda h: labels.order(h.cell)):
        c, m = h.compile, h.matcher
        rows.append(
            [
                labels(h.cell),
                h.cell.arm,
                str(c.n),
                rate_text(c.dep),
                rate_text(c.code),
                rate_text(c.cancel),
                rate_text(c.rewire),
                rate_text(c.relax),
                str(c.validator_flagged),
                rate_text(m.agreement),
                rate_text(m.redo_precision),
                rate_text(m.redo_recall),
                f"{m.matcher_calls} ({m.matcher_cached})",
                _outcomes(m.outcomes),
            ]
        )
    return rows


def _outcomes(outcomes: Mapping[str, int]) -> str:
    if not outcomes:
        return "-"
    return f"{outcomes.get('malformed', 0)} ({outcomes.get('corrected', 0)})"


def helper_table(lines: Sequence[ResultLine], labels: Labels = WIDE) -> str:
    """Tables 5 and 11 shapes: compile accuracy and matcher agreement per gate cell."""
    rows = helper_rows(lines, labels)
    if not rows:
        return ""
    title = (
        "Gate helpers: compile accuracy against the generator (Table 5 shape; flagged = "
        "episodes the validator flags) and matcher agreement / explicit-redo precision and "
        "recall (Table 11 shape)"
    )
    if labels.wide:
        return "\n".join([title, text_table(labelled_header(HELPERS_HEADER, labels), rows)])
    # at 80 columns: the compile columns, then the matcher's, each a table
    head = list(labelled_header(HELPERS_HEADER, labels))
    head[9], head[12], head[13] = "agree", "calls (cached)", "malformed (fixed)"
    compile_cols, matcher_cols = [0, 1, *range(2, 9)], [0, 1, *range(9, 14)]
    return "\n".join(
        [
            *textwrap.wrap(title, 80),
            text_table(
                [head[i] for i in compile_cols], [[r[i] for i in compile_cols] for r in rows]
            ),
            "",
            text_table(
                [head[i] for i in matcher_cols], [[r[i] for i in matcher_cols] for r in rows]
            ),
        ]
    )


GATE_HEADER = (
    "configuration",
    "arm",
    "episodes",
    "compiles failed",
    "empty",
    "flagged",
    "matcher malformed",
    "directives",
    "notices",
    "gate",
)


def gate_activity_rows(lines: Iterable[ResultLine], labels: Labels = WIDE) -> list[list[str]]:
    """Per gate cell: compiles failed / empty / validator-flagged (of compiles), matcher
    answers malformed after correction (of turns consulted), directives and rejection
    notices shown, and whether the gate acted (``inert``) or not."""
    rows = []
    helpers = [x for x in lines if isinstance(x, HelperLine)]
    for h in sorted(helpers, key=lambda h: labels.order(h.cell)):
        g = h.gate
        rows.append(
            [
                labels(h.cell),
                h.cell.arm,
                str(g.episodes),
                f"{g.compile_failed}/{g.compiles}",
                f"{g.compile_empty}/{g.compiles}",
                f"{g.compile_flagged}/{g.compiles}",
                f"{g.matcher_malformed}/{g.matcher_turns}",
                str(g.directives),
                str(g.notices),
                "INERT" if g.inert else ("-" if not g.episodes else "acted"),
            ]
        )
    return rows


# The gate activity table at 80 columns (#40): short heads.
NARROW_GATE_HEADER = (
    "cfg", "arm", "eps", "cmp fail", "empty", "flagged", "m.malf", "dirs", "notices", "gate",
)  # fmt: skip


def gate_activity_table(lines: Sequence[ResultLine], labels: Labels = WIDE) -> str:
    """Whether each gate cell's gate gated, then one line per inert cell saying why."""
    rows = gate_activity_rows(lines, labels)
    if not rows:
        return ""
    title = (
        "Gate activity: compiles failed / empty / validator-flagged, matcher answers "
        "malformed after correction (of turns consulted), directives and rejection notices "
        "shown"
    )
    if labels.wide:
        out = [title, text_table(GATE_HEADER, rows)]
    else:
        head = textwrap.wrap(title + " (cmp: compiles, m.malf: matcher malformed)", 80)
        out = [*head, text_table(NARROW_GATE_HEADER, rows)]
    inert = inert_lines(lines)
    if inert and labels.wide:
        out += [INERT_TITLE, *(f"  {x}" for x in inert)]
    elif inert:  # 80 columns (#49)
        out += textwrap.wrap(INERT_TITLE, 80)
        for x in inert:
            out += textwrap.wrap(x, 80, initial_indent="  ", subsequent_indent="    ")
    return "\n".join(out)
