"""Figure 5(a), the channel decomposition per arm (:func:`figure5a`; its data,
:func:`scoring.report.figures.channel_points`, and what it shows: that module's docstring).

Its panels are placed once, on a fixed grid whose margins come from the figure's own texts
(the titles' lines, the widest tick label, the legend's height), with no layout engine:
constrained layout measured every axes' text twice over, most of the time this figure took
to draw (#50). Pure (Figure objects and data); matplotlib is imported on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from protocol.arms.table import arm_rank
from protocol.records import CellKey
from scoring.report.figure_data import PER_EPISODES, ChannelPoint, ChannelRate, UnrequestedCount
from scoring.report.figure_text import (
    EDGE_IN,
    PT_IN,
    fixed_labels,
    left_margin_in,
    legend_below,
    new_figure,
    size_in,
    text_width_in,
    unit_axis,
)
from scoring.report.figures import (
    CHANNEL_NAMES,
    TITLE_PT,
    canonical,
    channel_points,
    config_name,
    panel_title,
)
from scoring.results.cells import RATES, cell_sort_key, config_of
from scoring.results.lines import CellLine

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.legend import Legend

__all__ = ["figure5a"]


def figure5a(cells: Sequence[CellLine]) -> tuple[Figure, list[ChannelPoint]] | None:
    """Figure 5(a) and its points: a panel per configuration of the canonical cells, two
    panels a row; None without such a cell."""
    data = channel_points(cells)
    if not data:
        return None
    order: dict[str, CellKey] = {}
    for c in cells:
        if canonical(c.cell) and c.n:
            order.setdefault(config_name(c.cell), config_of(c.cell))
    panels = sorted(order, key=lambda p: cell_sort_key(order[p]))
    ncols = min(2, len(panels))
    from matplotlib.lines import Line2D

    # no layout engine: the panels' places are computed once (_PanelGrid), not by constrained
    # layout's two passes over every axes' text (#50: most of this figure's drawing time)
    fig = new_figure(_PANEL_W * ncols, _PANEL_H * -(-len(panels) // ncols))
    channels = [ch for ch, _ in RATES]
    handles = [
        Line2D([], [], marker="o", linestyle="", color=f"C{j}", label=CHANNEL_NAMES[ch])
        for j, ch in enumerate(channels)
    ]
    legend = legend_below(fig, handles, [CHANNEL_NAMES[ch] for ch in channels], 7)
    fig.suptitle("Channel decomposition per arm (primary scoring)", fontsize=9,
                 y=1 - EDGE_IN / fig.get_figheight(), va="top")  # fmt: skip
    titles = [panel_title(panel, _PANEL_W - 0.4) for panel in panels]
    grid = _PanelGrid(fig, ncols, titles, legend)
    mine = [[d for d in data if d.panel == panel] for panel in panels]
    peaks = [_peak(points) for points in mine]
    for i, points in enumerate(mine):
        top, bottom = grid.axes(i)
        # a row's panels share their y scales (the rates' 0-1, the row's highest count):
        # the first column's axes label them, the others repeat no tick label (#50)
        row = i - i % ncols
        _channel_panel(top, bottom, points, channels, max(peaks[row : row + ncols]), i % ncols == 0)
        # y given: where matplotlib would put it (no top ticks, no offset text on a 0-1
        # axis), without measuring the axis's text again at every draw (#50)
        top.set_title(titles[i], fontsize=TITLE_PT, y=1.0)
    grid.fit_left()
    return fig, data


# Figure 5(a)'s panel (inches) and its fixed margins in points: a title line, a tick label
# line and the x label's line at 1.2 spacing; tick length and pads as matplotlib's defaults
_PANEL_W, _PANEL_H = 6.4, 4.8
_BELOW_PT = 3.5 + 3.5 + 7 * 1.2 + 4 + 8 * 1.2  # tick, pad, tick labels, label pad, "arm"
_GAP_IN = 0.12  # between a panel's rates and its counts
_SHARED_LEFT_IN = 0.3  # a panel's left margin past the first column (no y labels)
_RIGHT_IN = 0.15  # a panel's right margin


class _PanelGrid:
    """Figure 5(a)'s panels in rows of ``ncols``: each a rates axes over a counts axes
    (3:1, the same x limits; the arms' ticks on the counts only), a title above; the
    suptitle at the top, the legend at the bottom. Left margins are set by :meth:`fit_left`
    once the tick labels are known."""

    def __init__(self, fig: Figure, ncols: int, titles: Sequence[str], legend: Legend | None):
        self.fig, self.ncols = fig, ncols
        w, h = fig.get_figwidth(), fig.get_figheight()
        below = EDGE_IN + (legend.get_window_extent().height / fig.dpi if legend else 0.0)
        above = EDGE_IN + 9 * 1.2 * PT_IN + 0.08  # the suptitle
        self.rows = -(-len(titles) // ncols)
        self.cell = (w / ncols, (h - above - below) / self.rows)
        self.origin = (0.0, below)
        lines = [t.count("\n") + 1 for t in titles]
        # a row's panels line up: each leaves room for the row's longest title
        self._axes = [
            self._place(i, max(lines[i - i % ncols : i - i % ncols + ncols]))
            for i in range(len(titles))
        ]

    def _place(self, i: int, title_lines: int) -> tuple[Axes, Axes]:
        cw, ch = self.cell
        x0 = self.origin[0] + (i % self.ncols) * cw
        y0 = self.origin[1] + (self.rows - 1 - i // self.ncols) * ch
        head = (title_lines * TITLE_PT * 1.2 + 6) * PT_IN + 0.04  # the title and its pad
        foot = _BELOW_PT * PT_IN + 0.04
        inner = ch - head - foot - _GAP_IN
        left, width = x0 + 0.9, cw - 0.9 - _RIGHT_IN  # provisional: fit_left sets them
        low = inner / 4
        top = self._add((left, y0 + foot + low + _GAP_IN, width, inner - low))
        bottom = self._add((left, y0 + foot, width, low))
        return top, bottom

    def _add(self, rect: tuple[float, float, float, float]) -> Axes:
        w, h = self.fig.get_figwidth(), self.fig.get_figheight()
        x, y, dx, dy = rect
        return self.fig.add_axes((x / w, y / h, dx / w, dy / h))

    def axes(self, i: int) -> tuple[Axes, Axes]:
        return self._axes[i]

    def fit_left(self) -> None:
        """The first column's axes start past their y labels and tick labels (the widest of
        any of them, so the panels line up); the other columns' axes, which share the
        row's y scales and show no y labels, ``_SHARED_LEFT_IN`` past the axes before
        them; every axes equally wide. The axis labels are placed here, once
        (:func:`fixed_labels`)."""
        from matplotlib.font_manager import FontProperties

        first = self._axes[:: self.ncols]
        labels = {t.get_text() for pair in first for ax in pair
                  for t in ax.yaxis.get_ticklabels()}  # fmt: skip
        ticks = max(text_width_in(self.fig, s, FontProperties(size=7)) for s in labels)
        margin = left_margin_in(2 * 8 * 1.2, ticks)  # two lines of y label
        # every x tick label is one line of an arm's name at 7 pt: one height
        arms = self._axes[0][1].xaxis.get_ticklabels()
        arm_in = size_in(arms[0])[1] if arms else None
        w = self.fig.get_figwidth()
        # every column's axes equally wide: the first column's margin, then each axes and
        # the gap to the next (its right margin and the next one's left)
        step = (w - margin + _SHARED_LEFT_IN) / self.ncols
        for i, (top, bottom) in enumerate(self._axes):
            left = margin + (i % self.ncols) * step
            for ax in (top, bottom):
                box = ax.get_position()
                ax.set_position((left / w, box.y0, (step - _SHARED_LEFT_IN - _RIGHT_IN) / w,
                                 box.height))  # fmt: skip
            y_in = None if i % self.ncols else ticks
            fixed_labels(top, ytick_in=y_in, xtick_in=None)
            fixed_labels(bottom, ytick_in=y_in, xtick_in=arm_in)


def _peak(mine: Sequence[ChannelPoint]) -> float:
    """The top of a panel's counts axes: its highest unrequested count (at least 1), and
    room above it."""
    return max([1.0, *(d.y for d in mine if isinstance(d, UnrequestedCount))]) * 1.15


def _channel_panel(
    top: Axes,
    bottom: Axes,
    mine: Sequence[ChannelPoint],
    channels: Sequence[str],
    peak: float,
    labelled: bool,
) -> None:
    """One configuration's panel of Figure 5(a): each channel's rate over its label with
    its interval above, the unrequested count per 128 episodes below (up to ``peak``), arms
    on x; the y axes' tick labels and labels where ``labelled`` (the row's first panel)."""
    rates = [d for d in mine if isinstance(d, ChannelRate)]
    unreq = [d for d in mine if isinstance(d, UnrequestedCount)]
    xs = sorted({d.x for d in rates} | {d.x for d in unreq}, key=arm_rank)
    width = 0.8 / len(channels)
    series = [
        (f"C{j}", [(xs.index(d.x) + (j - (len(channels) - 1) / 2) * width, d)
                   for d in rates if d.series == ch])
        for j, ch in enumerate(channels)
    ]  # fmt: skip
    # the ticks' style first, then the ticks: each made in it, not made then restyled (#50)
    top.set_xticks([])  # the rates' x axis is the counts' right under it: no ticks (#50)
    for ax in (top, bottom):
        ax.tick_params(labelsize=7, labelleft=labelled)
        ax.grid(axis="y", alpha=0.3)
    _intervals(top, [(color, pts) for color, pts in series if pts])
    unit_axis(top)
    bottom.plot([xs.index(d.x) for d in unreq], [d.y for d in unreq], "s",
                color="0.3", markersize=5, label=f"unrequested per {PER_EPISODES} episodes")  # fmt: skip
    bottom.set_ylim(-0.06 * peak, peak)  # a zero count sits above the axis line
    _fixed_ticks(bottom, -0.06 * peak, peak)
    if labelled:
        top.set_ylabel("errors / label turns\n(Wilson 95% CI)", fontsize=8)
        bottom.set_ylabel(f"unrequested\nper {PER_EPISODES} ep.", fontsize=8)
    bottom.set_xticks(range(len(xs)), xs, fontsize=7)
    for ax in (top, bottom):
        ax.set_xlim(-0.6, len(xs) - 0.4)
    bottom.set_xlabel("arm", fontsize=8)


def _intervals(ax: Axes, series: Sequence[tuple[str, Sequence[tuple[float, ChannelRate]]]]) -> None:
    """Each channel's rates as points (4 pt circles) with their Wilson intervals (bars
    with 2 pt caps): what ``errorbar(x, y, yerr, fmt="o", markersize=4, capsize=2,
    color=...)`` per channel draws, pixel for pixel, as fewer artists (#50: the 50
    ``errorbar`` calls were a sixth of this figure's drawing): every channel's bars one
    collection, each channel's caps one line of markers, its points another; the bars and
    caps under the points (``errorbar``'s zorders), no two of them overlapping (a channel's
    points sit 0.16 of an arm from the next's)."""
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

    segments = [[(x, d.lo), (x, d.hi)] for _, pts in series for x, d in pts]
    colors = [color for color, pts in series for _ in pts]
    ax.add_collection(LineCollection(segments, colors=colors, zorder=2), autolim=False)
    for color, pts in series:
        xs = [x for x, _ in pts]
        caps = Line2D(xs + xs, [d.lo for _, d in pts] + [d.hi for _, d in pts], marker="_",
                      linestyle="none", markersize=4.0, color=color, zorder=2)  # fmt: skip
        ax.add_line(caps)
    for color, pts in series:
        ax.add_line(Line2D([x for x, _ in pts], [d.y for _, d in pts], marker="o",
                           linestyle="None", markersize=4, color=color, zorder=2.1))  # fmt: skip


def _fixed_ticks(ax: Axes, lo: float, hi: float) -> None:
    """*ax*'s y ticks given fixed: those its automatic locator shows between *lo* and *hi*
    (the view), without the ones it makes outside the view at every draw (#50); the left
    margin (:meth:`_PanelGrid.fit_left`) measures the labels shown."""
    shown = ax.yaxis.get_major_locator().tick_values(lo, hi)
    ax.set_yticks([float(v) for v in shown if lo <= v <= hi])
