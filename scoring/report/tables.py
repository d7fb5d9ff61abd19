"""Plain-text (and Markdown) tables from result lines.

Every table is built from the typed result lines of :mod:`scoring.results.lines` (cell, contrast
and helpers lines, decoded from a results file with :func:`scoring.results.lines.decode_line`), so ``ladder score``, ``ladder report`` and a results file read back
later print the same tables.

* Ladder tables: per configuration and arm, successes / n, the rate and its Wilson 95% CI,
  under one scoring (``strict``: primary; ``decline_aware``); then the adjacent contrasts with
  their discordant counts, exact McNemar p and Holm-adjusted p.
* The channel table (Table 9 shape): per cell, strict success and each error channel over its
  label denominator (errors/turns), unrequested executions as a count, and false completions
  over refused bookings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from protocol.config import config_label
from scoring.results.cells import RATES
from scoring.results.lines import CellLine, ContrastLine, HelperLine, ResultLine

__all__ = [
    "CHANNEL_HEADER",
    "CONTRAST_HEADER",
    "LADDER_HEADER",
    "channel_rows",
    "channel_table",
    "config_label",
    "contrast_rows",
    "ladder_rows",
    "ladder_table",
    "markdown_table",
    "plural",
    "text_table",
]

_TITLES = {"strict": "primary scoring", "decline_aware": "decline-aware scoring"}

# overflow: episodes in n that outgrew the model's context (failures, #40); infra: left out of n
LADDER_HEADER = ("configuration", "arm", "k/n", "rate", "95% CI", "overflow", "infra")
CONTRAST_HEADER = ("configuration", "contrast", "n", "b only", "a only", "p", "Holm p")
CHANNEL_HEADER = (
    "configuration",
    "arm",
    "strict",
    "re-exec/done",
    "superseded/cancelled",
    "premature/blocked",
    "omission/eligible",
    "refused redo/redo",
    "unrequested",
    "false compl.",
)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word`` in the number ``n`` takes: "1 line", "2 lines", "0 lines"."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _cells(lines: Iterable[ResultLine]) -> list[CellLine]:
    return [x for x in lines if isinstance(x, CellLine)]


def _contrasts(lines: Iterable[ResultLine], scoring: str) -> list[ContrastLine]:
    return [x for x in lines if isinstance(x, ContrastLine) and x.scoring == scoring]


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _p(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.2g}" if x < 0.001 else f"{x:.3f}"


def ladder_rows(lines: Iterable[ResultLine], scoring: str = "strict") -> list[list[str]]:
    rows = []
    for c in _cells(lines):
        lo, hi = c.ci(scoring)
        rows.append(
            [
                config_label(c.cell),
                c.cell.arm,
                f"{c.successes(scoring)}/{c.n}",
                _rate(c.rate(scoring)),
                f"[{lo:.2f}, {hi:.2f}]",
                str(c.context_overflows),
                str(c.infrastructure_errors),
            ]
        )
    return rows


def contrast_rows(lines: Iterable[ResultLine], scoring: str = "strict") -> list[list[str]]:
    return [
        [
            config_label(c.config),
            f"{c.a} -> {c.b}",
            str(c.n),
            str(c.b_only),
            str(c.a_only),
            _p(c.p),
            _p(c.p_holm),
        ]
        for c in _contrasts(lines, scoring)
    ]


def _over(k: int, n: int) -> str:
    return f"{k}/{n}" if n == 0 else f"{k / n:.3f} ({k}/{n})"


def channel_rows(lines: Iterable[ResultLine]) -> list[list[str]]:
    rows = []
    for c in _cells(lines):
        row = [config_label(c.cell), c.cell.arm, _rate(c.strict)]
        row += [_over(c.channels[ch], c.labels[label]) for ch, label in RATES]
        row.append(str(c.channels["unrequested"]))
        row.append(f"{c.false_completions}/{c.refused}" if c.refused else "-")
        rows.append(row)
    return rows


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell; the first two columns left-aligned."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]

    def fmt(cells: Sequence[str]) -> str:
        out = [
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(out).rstrip()

    return "\n".join([fmt(header), fmt(["-" * w for w in widths]), *map(fmt, rows)])


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def ladder_table(lines: Sequence[ResultLine], scoring: str = "strict") -> str:
    """Success per cell under *scoring*, then the adjacent contrasts of that scoring."""
    title = f"Strict success, {_TITLES[scoring]} (Wilson 95% CI)"
    parts = [title, text_table(LADDER_HEADER, ladder_rows(lines, scoring))]
    contrasts = contrast_rows(lines, scoring)
    if contrasts:
        parts += [
            "",
            f"Adjacent contrasts, {_TITLES[scoring]} (exact McNemar on shared seeds, Holm)",
            text_table(CONTRAST_HEADER, contrasts),
        ]
    return "\n".join(parts)


def channel_table(lines: Sequence[ResultLine]) -> str:
    """Table 9 shape: each channel over its label denominator, primary scoring."""
    title = (
        "Error channels, primary scoring (errors / turns with that label; unrequested as a "
        "count; false completions / refused bookings)"
    )
    return "\n".join([title, text_table(CHANNEL_HEADER, channel_rows(lines))])


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
    "malformed (corrected)",
)


def helper_rows(lines: Iterable[ResultLine]) -> list[list[str]]:
    rows = []
    for h in (x for x in lines if isinstance(x, HelperLine)):
        c, m = h.compile, h.matcher
        rows.append(
            [
                config_label(h.cell),
                h.cell.arm,
                str(c.n),
                _rate(c.dep),
                _rate(c.code),
                _rate(c.cancel),
                _rate(c.rewire),
                _rate(c.relax),
                str(c.validator_flagged),
                _rate(m.agreement),
                _rate(m.redo_precision),
                _rate(m.redo_recall),
                f"{m.matcher_calls} ({m.matcher_cached})",
                _outcomes(m.outcomes),
            ]
        )
    return rows


def _outcomes(outcomes: Mapping[str, int]) -> str:
    if not outcomes:
        return "-"
    return f"{outcomes.get('malformed', 0)} ({outcomes.get('corrected', 0)})"


def helper_table(lines: Sequence[ResultLine]) -> str:
    """Tables 5 and 11 shapes: compile accuracy and matcher agreement per gate cell."""
    rows = helper_rows(lines)
    if not rows:
        return ""
    title = (
        "Gate helpers: compile accuracy against the generator (Table 5 shape; flagged = "
        "episodes the validator flags) and matcher agreement / explicit-redo precision and "
        "recall (Table 11 shape)"
    )
    return "\n".join([title, text_table(HELPERS_HEADER, rows)])
