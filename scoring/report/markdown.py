"""The Markdown report and its figures, from result lines.

Figures are :class:`matplotlib.figure.Figure` objects built without pyplot (no global state,
no display; PNG output goes through the Agg canvas); the caller writes them
(``fig.savefig(path)``).

* :func:`figure_success` (Figure 1 shape): strict success per arm with Wilson 95% intervals
  under one scoring, the arms as points side by side within each configuration.
* :func:`figure_channels` (ours, no figure of the paper): errors per episode by channel,
  stacked, one bar per cell grouped by configuration, variants and non-canonical wordings
  included. The paper's
  Figure 5(a), each channel over its label denominator per arm, is
  :mod:`scoring.report.figures`'s ``figure5a``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import msgspec

from protocol.arms.table import arm_rank
from protocol.config import SCRIPTED, CellKey, config_label, is_synthetic, model_label
from protocol.state.machine import CHANNELS
from scoring.md_table import md_text
from scoring.plural import plural
from scoring.report.figure_text import (
    PT_IN,
    legend_below,
    new_figure,
    place_axes,
    short_labels,
    tallest_in,
    unit_axis,
    wrap,
)
from scoring.report.intervals import interval_series
from scoring.report.result_sections import channel_section, gate_sections, ladder_sections
from scoring.report.tables import Labels, inert_lines
from scoring.results.lines import CellLine, ResultLine

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Text

__all__ = [
    "figure_channels",
    "figure_success",
    "markdown_report",
    "numbered_sections",
    "synthetic_banner",
    "synthetic_warning",
]


def synthetic_warning(keys: Iterable[CellKey]) -> list[str]:
    """The report's SYNTHETIC block (a blank line first) when any cell's agent is the
    scripted synthetic agent, naming the models as the tables label them, and a SCRIPTED
    line for the cells of every other scripted policy (perfect, always-book, ...: rule-based
    oracles; #46); else nothing."""
    keys = list(keys)
    names = sorted({model_label(k) for k in keys if _synthetic(k)})
    scripted = sorted({model_label(k) for k in keys if _scripted(k) and not _synthetic(k)})
    if not names and not scripted:
        return []
    out = [""]
    if names:
        shown = ", ".join(f"`{n.replace('`', chr(39))}`" for n in names)
        out.append(
            f"> SYNTHETIC: cells of {shown} come from the scripted synthetic agent, a test "
            "instrument of this tool; they are no claim about any model."
        )
    if scripted:
        shown = ", ".join(f"`{n.replace('`', chr(39))}`" for n in scripted)
        out.append(
            f"> SCRIPTED: cells of {shown} come from a scripted rule-based policy of this "
            "tool (an oracle such as the perfect or always-book agent); they are no claim "
            "about any model."
        )
    return out


def _scripted(key: CellKey) -> bool:
    """Whether a scripted policy served the cell (its model read without a run prefix)."""
    return (key.served_by or key.model).rsplit(": ", 1)[-1].startswith(SCRIPTED)


def _synthetic(key: CellKey) -> bool:
    """Whether the cell's agent is the synthetic one, its model also read without the run
    that ``ladder score A B`` puts first (``runs/a: scripted/synthetic``)."""
    plain = key.model.rsplit(": ", 1)[-1]
    return is_synthetic(key) or is_synthetic(msgspec.structs.replace(key, model=plain))


def synthetic_banner(keys: Iterable[CellKey], width: int = 80) -> list[str]:
    """The SYNTHETIC warning as plain text lines within ``width`` columns, for the terminal
    outputs that name a cell (``score``, ``compare``, ``show``); nothing without a synthetic
    cell."""
    out: list[str] = []
    for block in synthetic_warning(keys):  # each its own paragraph (SYNTHETIC, SCRIPTED)
        text = block.removeprefix("> ").replace("`", "").strip()
        out += textwrap.wrap(text, width, subsequent_indent="  ") if text else []
    return out


def numbered_sections(sections: Sequence[str], labels: Labels) -> list[str]:
    """The analyses' Markdown with every table cell that spells out a listed configuration
    replaced by its number, ``#k`` (#40: the report's tables name configurations as its list
    numbers them); a column whose every row was replaced is headed ``cfg``. Text outside
    tables, and cells naming no listed configuration, are kept as they are."""
    out = "\n".join(sections).split("\n") if sections else []
    if labels.wide or not labels.numbers:
        return out
    start = None
    for i in range(len(out) + 1):
        row = i < len(out) and out[i].startswith("|") and out[i].endswith("|")
        if row and start is None:
            start = i
        elif not row and start is not None:
            out[start:i] = _numbered_table(out[start:i], labels.numbers)
            start = None
    return out


def _numbered_table(rows: list[str], numbers: dict[str, int]) -> list[str]:
    shaped = len(rows) >= 3 and rows[1].startswith("|-")
    if not shaped or not all(
        r.startswith("| ") and r.endswith(" |") for i, r in enumerate(rows) if i != 1
    ):
        return rows  # not a table as markdown_table writes one: left alone
    cells = [r[2:-2].split(" | ") for r in rows]
    if any(len(c) != len(cells[0]) for i, c in enumerate(cells) if i != 1):
        return rows
    body = cells[2:]
    for col in range(len(cells[0])):
        hits = [r[col] in numbers for r in body]
        if not any(hits):
            continue
        for r in body:
            if r[col] in numbers:
                r[col] = f"#{numbers[r[col]]}"
        if all(hits):
            cells[0][col] = "cfg"
    return [rows[1] if i == 1 else "| " + " | ".join(c) + " |" for i, c in enumerate(cells)]


def _cells(lines: Sequence[ResultLine]) -> list[CellLine]:
    return [x for x in lines if isinstance(x, CellLine)]


def _configs(cells: Sequence[CellLine]) -> list[str]:
    """The configurations in the order the tables number them (:class:`Labels`)."""
    return list(Labels(c.cell for c in cells).numbers)


def _arms(cells: Sequence[CellLine]) -> list[str]:
    return sorted(dict.fromkeys(c.cell.arm for c in cells), key=arm_rank)


_SCORING_NAMES = {"strict": "primary scoring", "decline_aware": "decline-aware scoring"}


def _config_ticks(configs: Sequence[str], width_in: float, fontsize: float) -> list[str]:
    """Tick labels for the configurations: ``#k`` (as the report's list numbers them) over
    what sets configuration k apart from the others, wrapped to its share of the width."""
    short = short_labels(configs)
    per = max(0.8, width_in / max(1, len(configs)))
    return [f"#{k}\n{wrap(s, per, fontsize)}" for k, s in enumerate(short, 1)]


def figure_success(lines: Sequence[ResultLine], scoring: str = "strict") -> Figure:
    """Strict success per arm with Wilson intervals under one scoring, arms as points side by
    side within each configuration (Figure 1 shape; configurations are categories, so no
    line joins them)."""
    cells = _cells(lines)
    configs = _configs(cells)
    arms = _arms(cells)
    width_in = max(5.0, 1.6 * len(configs) + 3)
    fig = new_figure(width_in, 4.8)
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(arms))
    for j, arm in enumerate(arms):
        xs, ys, bounds = [], [], []
        for c in cells:
            rate = c.rate(scoring)
            if c.cell.arm != arm or rate is None:
                continue
            xs.append(configs.index(config_label(c.cell)) + (j - (len(arms) - 1) / 2) * width)
            ys.append(rate)
            bounds.append(c.ci(scoring))
        interval_series(ax, xs, ys, bounds, color=f"C{j}", capsize=3, label=arm)
    for k in range(1, len(configs)):
        ax.axvline(k - 0.5, color="0.85", linewidth=0.8)
    ax.set_xticks(range(len(configs)), _config_ticks(configs, width_in - 1.2, 7), fontsize=7)  # fmt: skip
    ax.set_xlabel("configuration (#k: configuration k as listed in the report)", fontsize=8)
    ax.set_xlim(-0.6, len(configs) - 0.4)
    unit_axis(ax)  # 0 to 1 by 0.2, given fixed: no ticks made outside the view (#50)
    ax.set_ylabel("strict success (Wilson 95% CI)", fontsize=9)
    title = wrap(
        f"Strict success per arm, {_SCORING_NAMES.get(scoring, scoring)}", width_in - 0.6, 11
    )
    # y given: where matplotlib puts it over a 0-1 axis, without measuring the axis (#50)
    ax.set_title(title, fontsize=11, y=1.0)
    handles, names = ax.get_legend_handles_labels()
    legend = legend_below(fig, handles, names, 8)
    ax.grid(axis="y", alpha=0.3)
    ticks = max((_lines(t) for t in _config_ticks(configs, width_in - 1.2, 7)), default=1)
    # tick, pad, the tick labels' lines, label pad, the x label
    below = 3.5 + 3.5 + 7 * 1.2 * ticks + 4 + 8 * 1.2
    place_axes(ax, legend, title_pt=11 * 1.2 * _lines(title), below_pt=below, ylabel_pt=9 * 1.2)
    return fig


def _lines(text: str) -> int:
    return text.count("\n") + 1


def _stack(
    ax: Axes, bottom: Sequence[float], values: Sequence[float], color: str, label: str
) -> None:
    """One layer of stacked bars (width 0.8, centred on 0, 1, ...), as ``ax.bar(range(n),
    values, bottom=bottom, color=color, label=label)`` draws them, pixel for pixel, but as one
    collection added without updating the data limits (the caller sets both limits): the
    channels figure's 420 bars were a third of its drawing time one patch at a time (#50)."""
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    bars = [
        Rectangle((i - 0.4, b), 0.8, v, facecolor=color)
        for i, (b, v) in enumerate(zip(bottom, values, strict=True))
    ]
    ax.add_collection(PatchCollection(bars, match_original=True, label=label), autolim=False)


def figure_channels(lines: Sequence[ResultLine]) -> Figure:
    """Errors per episode by channel, stacked per cell, the cells grouped by configuration
    (ours; Figure 5(a) is :func:`scoring.report.paper_figures.paper_figures`'s ``figure5a``)."""
    from matplotlib.transforms import ScaledTranslation

    cells = _cells(lines)
    configs = _configs(cells)
    cells.sort(key=lambda c: configs.index(config_label(c.cell)))  # stable: arms keep order
    width_in = max(5.0, 0.6 * len(cells) + 2)
    fig = new_figure(width_in, 4.4)
    ax = fig.add_subplot()
    bottom = [0.0] * len(cells)
    for j, ch in enumerate(CHANNELS):
        values = [c.channels[ch] / c.n if c.n else 0.0 for c in cells]
        _stack(ax, bottom, values, f"C{j}", ch.replace("_", " "))
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set_xticks(range(len(cells)), [c.cell.arm for c in cells], fontsize=7)
    groups = [configs.index(config_label(c.cell)) for c in cells]
    spans = [[i for i, g in enumerate(groups) if g == k] for k in range(len(configs))]
    for span in spans[1:]:
        ax.axvline(span[0] - 0.5, color="0.6", linewidth=0.8)
    ax.set_xlim(-0.6, len(cells) - 0.4)
    ax.set_ylim(0, max([0.1, *bottom]) * 1.08)
    per = width_in / max(1, len(cells))
    names = [
        f"#{k}\n{wrap(s, per * len(span), 7)}"
        for k, (s, span) in enumerate(zip(short_labels(configs), spans, strict=True), 1)
    ]
    group_labels = _group_labels(ax, [(span[0] + span[-1]) / 2 for span in spans], names)
    ax.set_xlabel(
        "arm, grouped by configuration (#k: configuration k as listed in the report)", fontsize=8
    )
    ax.set_ylabel("errors per episode", fontsize=9)
    title = "Errors per episode by channel, every cell (primary scoring; ours, not a paper figure)"
    title = wrap(title, width_in - 0.6, 10)
    # y given: where matplotlib puts it (no top ticks), without measuring the axes (#50)
    ax.set_title(title, fontsize=10, y=1.0)
    handles, labels = ax.get_legend_handles_labels()
    legend = legend_below(fig, handles, labels, 7)
    ax.grid(axis="y", alpha=0.3)
    # the groups' labels 16 pt under the axis (past the arms'), their lines, label pad, label
    below = _GROUPS_PT + 7 * 1.2 * max((_lines(n) for n in names), default=1) + 4 + 8 * 1.2
    place_axes(ax, legend, title_pt=10 * 1.2 * _lines(title), below_pt=below, ylabel_pt=9 * 1.2)
    # the x label under the groups' labels, not the arms' (as place_axes put it)
    groups_in = tallest_in(group_labels)
    if groups_in is not None:
        shift = ScaledTranslation(0, -((_GROUPS_PT + 4) * PT_IN + groups_in), fig.dpi_scale_trans)
        ax.xaxis.set_label_coords(0.5, 0.0, transform=ax.transAxes + shift)
    return fig


_GROUPS_PT = 16.0  # the groups' labels under the axis, past the arms' tick labels


def _group_labels(ax: Axes, xs: Sequence[float], names: Sequence[str]) -> list[Text]:
    """Each group's label centred under its cells (*xs*, data), :data:`_GROUPS_PT` under
    the axes as tick labels of a second x axis would sit (pad 16, no tick), as texts: no
    second axis to lay out (#50: it was a third of the channels figure's drawing)."""
    from matplotlib.transforms import ScaledTranslation, blended_transform_factory

    fig = ax.get_figure(root=True)
    assert fig is not None
    under = blended_transform_factory(ax.transData, ax.transAxes) + ScaledTranslation(
        0, -_GROUPS_PT * PT_IN, fig.dpi_scale_trans
    )
    return [
        ax.text(x, 0.0, name, transform=under, ha="center", va="top", fontsize=7)
        for x, name in zip(xs, names, strict=True)
    ]


def markdown_report(
    lines: Sequence[ResultLine],
    *,
    title: str = "state-ladder report",
    notes: Sequence[str] = (),
    figures: Sequence[tuple[str, str]] = (),
    sections: Sequence[str] = (),
    details: Sequence[tuple[str, str]] = (),
) -> str:
    """The report (with ``details``, the run's, :func:`scoring.report.details.run_details`,
    first): ladder tables under both scorings, contrasts, the channel table, the
    ``sections`` (Markdown lines: the log analyses of :mod:`scoring.analyses.registry`), the
    configuration key and the figures (``(caption, relative path)`` pairs)."""
    cells = _cells(lines)
    n = sum(c.n for c in cells)
    infra = sum(c.infrastructure_errors for c in cells)
    overflow = sum(c.context_overflows for c in cells)
    no_reply = sum(c.no_reply for c in cells)
    also = f" and {no_reply} non-replies (content filter, empty reply)" if no_reply else ""
    out = [
        f"# {title}",
        "",
        f"{len(cells)} cells, {n} scored episodes, {infra} "
        f"infrastructure errors{also} (excluded from every count)."
        + (
            f" {overflow} episodes outgrew the model's context: counted in n as failures "
            "(the overflow column)."
            if overflow
            else ""
        ),
    ]
    out += synthetic_warning(c.cell for c in cells)
    out += [f"- {note}" for note in notes]
    inert_count = len(inert_lines(lines))
    if inert_count:
        out += [
            "",
            f"> GATE INERT: {plural(inert_count, 'gate cell')} never gated (see Gate "
            "activity); their successes and contrasts measure no gate.",
        ]
    if details:  # the run's details (#40), from its manifest
        out += ["", "## Run details", ""]
        out += [f"- {name}: `{value.replace('`', chr(39))}`" for name, value in details]
    labels = Labels.of(lines)  # tables name configurations by number (#40)
    if labels.numbers:
        out += ["", "## Configurations", ""]
        out += [f"{i}. {md_text(c)}" for c, i in labels.numbers.items()]
    out += ladder_sections(lines, labels)
    out += channel_section(lines, labels)
    out += gate_sections(lines, labels)
    out += numbered_sections(sections, labels)
    if figures:
        out += ["", "## Figures", ""]
        out += [f"![{caption}]({path})" for caption, path in figures]
    return "\n".join(out) + "\n"
