"""The paper's figures drawn from the cells present (pure: Figure objects and their data,
the data computed in :mod:`scoring.report.figure_points` without drawing);
:mod:`scoring.report.paper_figures` lists them for the report.

Each figure is built only when its cells are in the lines, with points (no connecting
lines) across categorical configurations, Wilson 95% intervals, labelled axes, and the data
behind every point (:class:`Point`) so that ``ladder report`` writes it as JSON beside the
PNG. Cells with non-default knobs (variants) and non-canonical wordings are left out of the
Figure 1 / 4(a) / 4(b) / 6 panels; the corrupted-state panel takes the enforcement cells
that differ from their configuration only in ``corruption``.

* Figure 1: strict success by rung across the capability points (one series per model and
  regime, amended brief, S = 15 dense).
* Figure 4 (amended brief): (a) graph-size axis (x: S and density, one series per arm and
  model), (b) model axis (x: model and regime at S = 15 dense, one series per arm), (c) the
  corrupted-state ablation (x: epsilon, the enforcement gate, one series per model and
  graph).
* Figure 5(a) (drawn by :mod:`scoring.report.channel_panels`; its data here): the channel
  decomposition per arm (the decomposition behind Table 9, D.2):
  one panel per configuration (model, regime, brief, S, density, domain), the arms in ladder
  order on x, each error channel over its label denominator exactly as Table 9 computes it
  (:data:`scoring.results.cells.RATES`: re-execution / done, superseded / cancelled, premature /
  blocked, omission / eligible, refused redo / redo) with its Wilson 95% interval, and below
  it unrequested executions (no label, hence no rate) as a count per 128 episodes, as Table
  9's caption gives them, without an interval. A channel whose label never occurred in a cell has
  no point there.
* Figure 5(b): the corruption replay's omission attribution per epsilon (counts, stacked
  bars, one panel per configuration; from :mod:`scoring.analyses.corruption_replay`).
* Figure 6: the original-brief ladder at S = 15 dense, one series per model and regime.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.arms.table import arm_rank
from scoring.analyses.corruption_replay import FAILURE_KINDS, CorruptionLine
from scoring.report.figure_data import (
    PER_EPISODES,
    ChannelPoint,
    ChannelRate,
    FigureData,
    OmissionRow,
    Point,
    UnrequestedCount,
)
from scoring.report.figure_points import (
    SortKey,
    canonical,
    channel_points,
    config_name,
    corruption_panels,
    figure4_data,
    figure4_panels,
    figure4_points,
    omission_row,
    omission_rows,
    rung_points,
)
from scoring.report.figure_text import (
    EDGE_IN,
    PT_IN,
    fixed_labels,
    left_margin_in,
    legend_below,
    new_figure,
    size_in,
    tallest_in,
    text_width_in,
    unit_axis,
    wrap,
)
from scoring.report.intervals import interval_series
from scoring.results.lines import CellLine

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure
    from matplotlib.legend import Legend

__all__ = [
    "CHANNEL_NAMES",
    "PER_EPISODES",
    "TITLE_PT",
    "ChannelPoint",
    "ChannelRate",
    "Drawn",
    "FigureData",
    "Point",
    "UnrequestedCount",
    "canonical",
    "channel_points",
    "config_name",
    "figure4",
    "figure4_points",
    "figure5b",
    "omission_rows",
    "panel_title",
    "rung_points",
    "rungs_figure",
]

CHANNEL_NAMES = {
    "re_execution": "re-execution / done",
    "superseded": "superseded / cancelled",
    "premature": "premature / blocked",
    "omission": "omission / eligible",
    "refused_redo": "refused redo / redo",
}


TITLE_PT = 8


def panel_title(panel: str, width_in: float) -> str:
    """A panel's name as its title: the model (and regime) on a line of its own, the rest
    of the configuration below, each wrapped to the panel's width (never cut)."""
    model, sep, rest = panel.partition("), ")
    text = f"{model})\n{rest}" if sep else panel
    return wrap(text, width_in, TITLE_PT)


def _grid(fig: Figure, n: int, ncols: int) -> list[SubFigure]:
    """``n`` subfigures of ``fig`` in rows of ``ncols``."""
    rows = -(-n // ncols)
    subs = fig.subfigures(rows, ncols, squeeze=False)
    flat = [subs[i // ncols][i % ncols] for i in range(rows * ncols)]
    return flat[:n]


def figure5b(corruption: Sequence[CorruptionLine]) -> tuple[Figure, list[OmissionRow]]:
    """Stacked omission attribution per epsilon, one panel per configuration (the cell with
    its arm blanked and no corruption)."""
    panels = corruption_panels(corruption)
    ncols = min(2, len(panels))
    panel_width = 5.2
    fig = new_figure(panel_width * ncols, 3.6 * -(-len(panels) // ncols) + 0.4, constrained=True)
    for sub, (key, mine) in zip(_grid(fig, len(panels), ncols), panels, strict=True):
        arms = {c.cell.arm for c in mine}
        ax = sub.subplots()
        bottom = [0] * len(mine)
        for j, kind in enumerate(FAILURE_KINDS):
            values = [c.omissions[kind] for c in mine]
            ax.bar(range(len(mine)), values, bottom=bottom, color=f"C{j}", width=0.6,
                   label=kind.replace("_", " "))  # fmt: skip
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        for i, c in enumerate(mine):
            ax.annotate(f"n={c.episodes}", (i, bottom[i]), ha="center", va="bottom", fontsize=6,
                        xytext=(0, 2), textcoords="offset points")  # fmt: skip
        labels = [f"{c.epsilon:g}" + (f"\n{c.cell.arm}" if len(arms) > 1 else "") for c in mine]
        ax.set_xticks(range(len(mine)), labels, fontsize=7)
        ax.set_xlim(-0.6, len(mine) - 0.4)
        ax.set_ylim(0, max(1, *bottom) * 1.15)
        ax.set_xlabel("corruption rate epsilon" + (", arm" if len(arms) > 1 else ""), fontsize=8)
        ax.set_ylabel("omissions (count)", fontsize=8)
        title = config_name(key) + ("" if len(arms) > 1 else f", {next(iter(arms))}")
        ax.set_title(panel_title(title, panel_width - 0.4), fontsize=TITLE_PT)
        ax.tick_params(labelsize=7)
        ax.grid(axis="y", alpha=0.3)
    handles, names = fig.axes[0].get_legend_handles_labels()
    legend_below(fig, handles, names, 7)
    fig.suptitle("Corruption replay: omissions by the corrupted decision", fontsize=9)
    return fig, [omission_row(key, c) for key, mine in panels for c in mine]


def _draw(
    points: Sequence[Point], ax: Axes, xlabel: str, xs: Sequence[str], width_in: float
) -> _Panel:
    """Points with their intervals, series side by side at each x; tick labels and legend
    entries wrapped to the axes' *width_in* inches; the legend made, :func:`_place` puts it."""
    names = list(dict.fromkeys(p.series for p in points))
    width = 0.7 / max(1, len(names))
    for j, name in enumerate(names):
        mine = [p for p in points if p.series == name]
        interval_series(
            ax,
            [xs.index(p.x) + (j - (len(names) - 1) / 2) * width for p in mine],
            [p.y for p in mine],
            [(p.lo, p.hi) for p in mine],
            color=f"C{j}",
            capsize=3,
            label=wrap(name, width_in / 2, 6),
        )
    per = max(0.6, width_in / max(1, len(xs)) - 0.1)
    ticks = [wrap(x, per, 7) for x in xs]
    ax.set_xticks(range(len(xs)), ticks, fontsize=7)
    ax.set_xlim(-0.6, len(xs) - 0.4)
    unit_axis(ax)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel("strict success (Wilson 95% CI)", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    # the tick labels' lines at 7 pt, the label's line at 8 pt (1.2 line spacing), the
    # ticks' and the label's pads (3.5 + 3.5 + 4 pt) and a gap of 4 pt, below the axes
    lines = max((t.count("\n") + 1 for t in ticks), default=1)
    below = (7 * 1.2 * lines + 8 * 1.2 + 11 + 4) / 72
    legend = ax.legend(fontsize=6, loc="upper center", ncols=2) if names else None
    return _Panel(ax, below, legend)


@dataclass(frozen=True)
class _Panel:
    """An axes of Figures 1, 4 and 6, what it draws under it (its tick labels and x label,
    inches), its legend (to go under those)."""

    ax: Axes
    below: float
    legend: Legend | None


def _place(fig: Figure, panels: Sequence[_Panel], title_lines: int) -> None:
    """*fig*'s axes side by side in equal shares of its width, placed once (no layout
    engine: constrained layout measured every text twice, #50): each with its title of
    *title_lines* lines at 9 pt above it, its y label and tick labels on its left, its tick
    labels, x label and legend under it (the lowest sets every axes' bottom), the legend
    centred under its axes but inside the axes' share; the axis labels placed with them
    (:func:`fixed_labels`)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.transforms import ScaledTranslation

    w, h = fig.get_figwidth(), fig.get_figheight()
    sizes = [size_in(p.legend) if p.legend is not None else (0.0, 0.0) for p in panels]
    bottom = EDGE_IN + max(p.below + lh for p, (_, lh) in zip(panels, sizes, strict=True)) + 0.06
    top = EDGE_IN + (9 * 1.2 * title_lines + 6) * PT_IN + 0.04
    share = w / len(panels)
    for i, (p, (lw, _)) in enumerate(zip(panels, sizes, strict=True)):
        labels = p.ax.yaxis.get_ticklabels()
        font = FontProperties(size=labels[0].get_fontsize() if labels else 10)
        ticks = max((text_width_in(fig, t.get_text(), font) for t in labels), default=0.0)
        left = i * share + left_margin_in(8 * 1.2, ticks)
        right = (i + 1) * share - 0.15
        p.ax.set_position((left / w, bottom / h, (right - left) / w, 1 - (bottom + top) / h))
        fixed_labels(p.ax, ytick_in=ticks, xtick_in=tallest_in(p.ax.xaxis.get_ticklabels()))
        if p.legend is not None:
            low, high = i * share + EDGE_IN + lw / 2, (i + 1) * share - EDGE_IN - lw / 2
            centre = min(max((left + right) / 2, low), high)
            shift = ScaledTranslation(0, -p.below, fig.dpi_scale_trans)
            p.legend.set_bbox_to_anchor(
                ((centre - left) / (right - left), 0.0), transform=p.ax.transAxes + shift
            )


def _order(xs: Sequence[str], key: Callable[[str], SortKey]) -> list[str]:
    return sorted(dict.fromkeys(xs), key=key)


def _rung_key(x: str) -> SortKey:
    return arm_rank(x)


# A drawn figure and the data behind its points (written as JSON beside the PNG).
Drawn = tuple["Figure", FigureData]


def rungs_figure(cells: Sequence[CellLine], brief: str, caption: str) -> Drawn | None:
    """Figures 1 and 6 (:func:`rung_points` drawn), titled by ``caption`` after its
    "Figure N: "."""
    pts = rung_points(cells, brief)
    if pts is None:
        return None
    fig = new_figure(6.0, 4.0)
    ax = fig.add_subplot()
    panel = _draw(pts, ax, "rung", _order([p.x for p in pts], _rung_key), 5.6)
    title = wrap(caption.split(": ", 1)[1], 5.0, 9)
    ax.set_title(title, fontsize=9, y=1.0)  # as _draw's 0-1 axis places it
    _place(fig, [panel], title.count("\n") + 1)
    return fig, pts


def figure4(cells: Sequence[CellLine]) -> Drawn | None:
    """Figure 4's panels whose cells are present."""
    present = figure4_panels(cells)
    if not present:
        return None
    fig = new_figure(5.0 * len(present), 4.0)
    placed: list[_Panel] = []
    for i, (pts, label, key, title) in enumerate(present):
        ax = fig.add_subplot(1, len(present), i + 1)
        placed.append(_draw(pts, ax, label, _order([p.x for p in pts], key), 4.6))
        ax.set_title(title, fontsize=9, y=1.0)  # as _draw's 0-1 axis places it
    _place(fig, placed, 1)
    return fig, figure4_data(present)
