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

The gate cells' tables (helpers, gate activity) are :mod:`scoring.report.gate_tables`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence

import msgspec

from protocol.config import config_label
from protocol.records import CellKey
from scoring.plural import plural
from scoring.results.cells import RATES, config_of, ladder_sort_key
from scoring.results.families import variant_reference
from scoring.results.lines import CellLine, ContrastLine, HelperLine, ResultLine

__all__ = [
    "CHANNEL_HEADER",
    "CONTRAST_HEADER",
    "LADDER_HEADER",
    "PASS_K_NOTE",
    "WIDE",
    "Labels",
    "channel_rows",
    "channel_table",
    "contrast_rows",
    "inert_lines",
    "labelled_header",
    "ladder_rows",
    "ladder_table",
    "pass_k_header",
    "pass_k_rows",
    "rate_text",
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


class Labels:
    """How a table names a configuration (#40): by number, ``#k``, with a legend that spells
    each out (80 columns), or in full (``wide``, the long form). Numbers follow the ladder
    order of the configurations' cells (:func:`scoring.results.cells.ladder_sort_key`)."""

    def __init__(self, keys: Iterable[CellKey] = (), *, wide: bool = False) -> None:
        self.wide = wide
        configs = sorted({config_of(k) for k in keys}, key=ladder_sort_key)
        self.numbers: dict[str, int] = {}
        for c in configs:
            self.numbers.setdefault(config_label(c), len(self.numbers) + 1)

    @classmethod
    def of(cls, lines: Iterable[ResultLine], *, wide: bool = False) -> Labels:
        keys = [x.config if isinstance(x, ContrastLine) else x.cell for x in lines]
        return cls(keys, wide=wide)

    def __call__(self, key: CellKey) -> str:
        label = config_label(key)
        if self.wide or label not in self.numbers:
            return label
        return f"#{self.numbers[label]}"

    @property
    def header(self) -> str:
        return "configuration" if self.wide else "cfg"

    def order(self, key: CellKey) -> tuple[int, tuple[object, ...]]:
        """A row's place: its configuration's number, then the ladder."""
        return (self.numbers.get(config_label(key), 0), ladder_sort_key(key))

    def legend(self, width: int = 80) -> str:
        """``Configurations:`` then ``#k  label`` per line, wrapped to ``width``; "" when wide."""
        if self.wide or not self.numbers:
            return ""
        out = ["Configurations:"]
        for label, k in self.numbers.items():
            head = f"  #{k:<3} "
            out += textwrap.wrap(
                label, width, initial_indent=head, subsequent_indent=" " * len(head)
            )
        return "\n".join(out)


WIDE = Labels(wide=True)  # every configuration in full (the tables' long form)


def _cells(lines: Iterable[ResultLine]) -> list[CellLine]:
    return [x for x in lines if isinstance(x, CellLine)]


def _contrasts(lines: Iterable[ResultLine], scoring: str) -> list[ContrastLine]:
    return [x for x in lines if isinstance(x, ContrastLine) and x.scoring == scoring]


def rate_text(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _p(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.2g}" if x < 0.001 else f"{x:.3f}"


def _inert(lines: Iterable[ResultLine]) -> dict[CellKey, str]:
    """cell key -> why its gate was inert, from the helpers lines among ``lines``."""
    return {
        h.cell: h.gate.why or "gate inert"
        for h in lines
        if isinstance(h, HelperLine) and h.gate.inert
    }


INERT_MARK = " [gate inert]"


def inert_lines(lines: Iterable[ResultLine]) -> list[str]:
    """One line per gate cell whose gate was inert: its configuration, arm and why."""
    return [f"{config_label(k)} {k.arm}: {why}" for k, why in _inert(lines).items()]


def labelled_header(header: Sequence[str], labels: Labels) -> tuple[str, ...]:
    return (labels.header, *header[1:])


def ladder_rows(
    lines: Iterable[ResultLine], scoring: str = "strict", labels: Labels = WIDE
) -> list[list[str]]:
    """Cells in ladder order (:meth:`Labels.order`), each configuration by ``labels``."""
    lines = list(lines)
    inert = _inert(lines)
    rows = []
    for c in sorted(_cells(lines), key=lambda c: labels.order(c.cell)):
        lo, hi = c.ci(scoring)
        rows.append(
            [
                labels(c.cell),
                c.cell.arm + (INERT_MARK if c.cell in inert else ""),
                f"{c.successes(scoring)}/{c.n}",
                rate_text(c.rate(scoring)),
                f"[{lo:.2f}, {hi:.2f}]",
                str(c.context_overflows),
                str(c.infrastructure_errors),
            ]
        )
    return rows


def contrast_rows(
    lines: Iterable[ResultLine], scoring: str = "strict", labels: Labels = WIDE
) -> list[list[str]]:
    return [
        [
            labels(c.config),
            _contrast(c, labels) + (f" [INERT: {', '.join(c.gate_inert)}]" if c.gate_inert else ""),
            str(c.n),
            str(c.b_only),
            str(c.a_only),
            _p(c.p),
            _p(c.p_holm),
        ]
        for c in sorted(_contrasts(lines, scoring), key=lambda c: labels.order(c.config))
    ]


def _contrast(c: ContrastLine, labels: Labels) -> str:
    """``a -> b``; a knob variant's sides by their configurations' numbers and arms
    (``#1 raw -> #3 raw``; the legend spells the knobs) at 80 columns, in full under
    ``--wide`` (#49)."""
    arm, bracket, _ = c.b.partition("[")
    ref = variant_reference(msgspec.structs.replace(c.config, arm=arm)) if bracket else None
    if labels.wide or c.kind != "variant" or ref is None:
        return f"{c.a} -> {c.b}"
    return f"{labels(ref)} {ref.arm} -> {labels(c.config)} {arm}"


def _tried(lines: Iterable[ResultLine]) -> list[CellLine]:
    """The cells run with repeated trials (--trials K > 1)."""
    return [c for c in _cells(lines) if c.trials > 1]


def pass_k_header(lines: Iterable[ResultLine], labels: Labels = WIDE) -> tuple[str, ...]:
    """The pass^k table's header: configuration, arm, trials per seed, pass^1 .. pass^K (K
    the most trials of a cell); () when no cell has repeated trials."""
    most = max((c.trials for c in _tried(lines)), default=0)
    if not most:
        return ()
    return (labels.header, "arm", "trials", *(f"pass^{k}" for k in range(1, most + 1)))


def pass_k_rows(
    lines: Iterable[ResultLine], scoring: str = "strict", labels: Labels = WIDE
) -> list[list[str]]:
    """pass^k per cell run with repeated trials under *scoring* (scoring.results.trials),
    cells in ladder order; "-" where no seed had k counted trials."""
    cells = sorted(_tried(lines), key=lambda c: labels.order(c.cell))
    most = max((c.trials for c in cells), default=0)
    rows = []
    for c in cells:
        hats = c.pass_k.get(scoring, ())
        shown = [rate_text(hats[k]) if k < len(hats) else "-" for k in range(most)]
        rows.append([labels(c.cell), c.cell.arm, str(c.trials), *shown])
    return rows


PASS_K_NOTE = (
    "pass^k: the chance that k trials of one seed all succeed (tau-bench's estimate, "
    "C(c,k)/C(n,k) per seed, averaged over seeds; docs/trials.md)"
)


def _over(k: int, n: int) -> str:
    return f"{k}/{n}" if n == 0 else f"{k / n:.3f} ({k}/{n})"


def channel_rows(lines: Iterable[ResultLine], labels: Labels = WIDE) -> list[list[str]]:
    rows = []
    for c in sorted(_cells(lines), key=lambda c: labels.order(c.cell)):
        row = [labels(c.cell), c.cell.arm, rate_text(c.strict)]
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


def ladder_table(
    lines: Sequence[ResultLine], scoring: str = "strict", labels: Labels = WIDE
) -> str:
    """Success per cell under *scoring*, then the adjacent contrasts of that scoring."""
    title = f"Strict success, {_TITLES[scoring]} (Wilson 95% CI)"
    rows = ladder_rows(lines, scoring, labels)
    parts = [title, text_table(labelled_header(LADDER_HEADER, labels), rows)]
    contrasts = contrast_rows(lines, scoring, labels)
    if contrasts:
        parts += [
            "",
            f"Adjacent contrasts, {_TITLES[scoring]} (exact McNemar, Holm)",
            text_table(labelled_header(CONTRAST_HEADER, labels), contrasts),
        ]
    tried = pass_k_rows(lines, scoring, labels)
    if tried:  # repeated trials (--trials K, #40)
        parts += [
            "",
            f"pass^k, {_TITLES[scoring]}",
            text_table(pass_k_header(lines, labels), tried),
            textwrap.fill(PASS_K_NOTE + "; contrasts pair each seed's majority of trials", 80),
        ]
    n = len(_inert(lines))
    if n:
        note = INERT_NOTE.format(n=plural(n, "gate cell"))
        parts += ["", note if labels.wide else textwrap.fill(note, 80)]
    return "\n".join(parts)


INERT_NOTE = (
    "[gate inert] / INERT: {n} never gated: no gate is measured there, and a contrast with "
    "one is no measured null (why: the gate activity table)"
)


INERT_TITLE = (
    "Gates that did not gate (their cells measure no gate; a contrast marked INERT is no "
    "measured null):"
)


# The channel table at 80 columns: each channel's errors / labelled turns, short heads.
NARROW_CHANNEL_HEADER = (
    "cfg", "arm", "strict", "re-ex", "super", "prem", "omit", "redo", "unreq", "false",
)  # fmt: skip


def channel_table(lines: Sequence[ResultLine], labels: Labels = WIDE) -> str:
    """Table 9 shape: each channel over its label denominator, primary scoring (at 80
    columns, ``errors/turns`` under short heads; ``labels.wide``: rates with counts)."""
    if labels.wide:
        title = (
            "Error channels, primary scoring (errors / turns with that label; unrequested "
            "as a count; false completions / refused bookings)"
        )
        return "\n".join([title, text_table(CHANNEL_HEADER, channel_rows(lines, labels))])
    rows = []
    for c in sorted(_cells(lines), key=lambda c: labels.order(c.cell)):
        row = [labels(c.cell), c.cell.arm, rate_text(c.strict)]
        row += [f"{c.channels[ch]}/{c.labels[label]}" for ch, label in RATES]
        row.append(str(c.channels["unrequested"]))
        row.append(f"{c.false_completions}/{c.refused}" if c.refused else "-")
        rows.append(row)
    title = (
        "Error channels, primary scoring: errors / turns with the label (re-ex: "
        "re-executions / done, super: superseded / cancelled, prem: premature / blocked, "
        "omit: omissions / eligible, redo: refused redos / redo); unreq: unrequested, a "
        "count; false: false completions / refused bookings"
    )
    head = textwrap.wrap(title, 80, break_on_hyphens=False)
    return "\n".join([*head, text_table(NARROW_CHANNEL_HEADER, rows)])
