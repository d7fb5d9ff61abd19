"""Replies cut at their token budget per cell and role (#49): the table ``ladder score``
prints, and a warning line per cell and role past
:data:`scoring.analyses.truncation.CUT_WARN_SHARE`. Pure.

A reply whose ``finish_reason`` is ``length`` stopped at its ``max_tokens``: an agent's ref
line written after a preamble is lost (scored as an omission), a matcher's or compiler's
answer malformed. The counts are the cell lines' ``cut`` (every request the cell's
episodes made, those not counted in n included).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence

from protocol.records import CellKey
from scoring.analyses.truncation import CUT_ROLES, CUT_WARN_SHARE, add_cuts, cut_warnings
from scoring.report.tables import WIDE, Labels, text_table
from scoring.results.lines import CellLine, ResultLine

__all__ = ["CUT_MARK", "cut_rows", "cut_table", "cut_warning_lines"]

CUT_MARK = " !"  # OURS: a role's share past the threshold, in the table
CUT_HEAD = "Replies cut at their token budget (finish_reason length)"


def _cells(lines: Iterable[ResultLine]) -> list[CellLine]:
    return [x for x in lines if isinstance(x, CellLine) and x.cut]


def _share(n: int, made: int) -> str:
    if not made:
        return "-"
    mark = CUT_MARK if n / made > CUT_WARN_SHARE else ""
    return f"{n}/{made} ({n / made:.0%}){mark}"


def cut_rows(lines: Iterable[ResultLine], labels: Labels = WIDE) -> list[list[str]]:
    """Per cell in ladder order: its configuration, arm and, per role of
    :data:`CUT_ROLES`, ``cut/made (share)`` (``-`` where the role made no request), marked
    with :data:`CUT_MARK` past the threshold."""
    rows = []
    for c in sorted(_cells(lines), key=lambda c: labels.order(c.cell)):
        cut = add_cuts([c.cut])
        rows.append([labels(c.cell), c.cell.arm, *(_share(*cut[r]) for r in CUT_ROLES)])
    return rows


def cut_warning_lines(lines: Iterable[ResultLine], labels: Labels = WIDE) -> list[str]:
    """``warning: #1 raw: 88/88 agent replies (100%) cut at their token budget ...`` per
    cell and role past the threshold, in ladder order."""
    cells = sorted(_cells(lines), key=lambda c: labels.order(c.cell))

    def named(key: CellKey) -> str:
        return f"{labels(key)} {key.arm}"

    return cut_warnings({c.cell: c.cut for c in cells}, named)


def cut_table(lines: Sequence[ResultLine], labels: Labels = WIDE) -> str:
    """One line saying no reply was cut; else the per-cell table (80 columns with numbered
    configurations) and the warning lines. "" when no cell line counts its replies (lines
    older than the count)."""
    cells = _cells(lines)
    if not cells:
        return ""
    total = add_cuts(c.cut for c in cells)
    if not any(n for n, _ in total.values()):
        made = sum(m for _, m in total.values())
        return f"{CUT_HEAD}: none of {made} replies."
    head = (
        f"{CUT_HEAD}, cut/made per role (!: past {CUT_WARN_SHARE:.0%} of a role's replies; "
        "an agent's ref line after a preamble is then lost, a helper's answer malformed)"
    )
    out = [
        *textwrap.wrap(head, 80),
        text_table((labels.header, "arm", *CUT_ROLES), cut_rows(lines, labels)),
    ]
    for line in cut_warning_lines(lines, labels):
        out += textwrap.wrap(line, 80, subsequent_indent="  ")
    return "\n".join(out)
