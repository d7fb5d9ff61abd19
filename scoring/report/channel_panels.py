"""Figure 5(a), the channel decomposition per arm (:func:`figure5a`; its data,
:func:`scoring.report.figures.channel_points`, and what it shows: that module's docstring).

Its panels are placed once, on a fixed grid whose margins come from the figure's own texts
(the titles' lines, the widest tick label, the legend's height), with no layout engine:
constrained layout measured every axes' text twice over, most of the time this figure took
to draw (#50). Pure (Figure objects and data); matplotlib is imported on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.arms.table import arm_rank
from protocol.records import CellKey
from scoring.report.figure_data import PER_EPISODES, ChannelPoint, ChannelRate, UnrequestedCount
from scoring.report.figure_text import (
    EDGE_IN,
    LABEL_PAD_PT,
    PT_IN,
    TICK_PAD_PT,
    fixed_labels,
    left_margin_in,
    legend_below,
    new_figure,
    tallest_in,
    text_width_in,
)
from scoring.report.figures import (
    CHANNEL_NAMES,
    TITLE_PT,
    canonical,
    channel_points,
    config_name,
    panel_title,
)
from scoring.report.intervals import interval_series
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
        ax, band = grid.axes(i)
        # a row's panels share their y scales (the rates' 0-1, the row's highest count):
        # the first column's axes label them, the others repeat no tick label (#50)
        row = i - i % ncols
        _channel_panel(ax, band, points, channels, max(peaks[row : row + ncols]), i % ncols == 0)
        # y given: where matplotlib would put it (no top ticks, no offset text on a 0-1
        # axis), without measuring the axis's text again at every draw (#50)
        ax.set_title(titles[i], fontsize=TITLE_PT, y=1.0)
    grid.fit_left()
    return fig, data


# Figure 5(a)'s panel (inches) and its fixed margins in points: a title line, a tick label
# line and the x label's line at 1.2 spacing; tick length and pads as matplotlib's defaults
_PANEL_W, _PANEL_H = 6.4, 4.8
_BELOW_PT = 3.5 + 3.5 + 7 * 1.2 + 4 + 8 * 1.2  # tick, pad, tick labels, label pad, "arm"
_GAP_IN = 0.12  # between a panel's rates and its counts
_SHARED_LEFT_IN = 0.3  # a panel's left margin past the first column (no y labels)
_RIGHT_IN = 0.15  # a panel's right margin


@dataclass(frozen=True)
class _Band:
    """Where a panel's counts sit in its one axes: the data interval ``lo``..``hi`` of the
    axes' y under the rates' -0.02..1.02 (a quarter of the panel's height, as a counts axes
    of its own took), the separating line at ``rule``; the rates' and the counts' centres
    in axes fractions (their y labels)."""

    lo: float
    hi: float
    rule: float
    rates_mid: float
    counts_mid: float
    nbins: int  # the counts' ticks at most, as matplotlib fits them in the band's height

    def y(self, value: float, low: float, high: float) -> float:
        """A count *value* on a scale from *low* to *high*, in the axes' data."""
        return self.lo + (value - low) / (high - low) * (self.hi - self.lo)


class _PanelGrid:
    """Figure 5(a)'s panels in rows of ``ncols``: each one axes, the rates above and the
    counts in a band below them (3:1, a rule between; #50: one axes a panel, not two, and
    their ticks), a title above; the suptitle at the top, the legend at the bottom. Left
    margins are set by :meth:`fit_left` once the tick labels are known."""

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

    def _place(self, i: int, title_lines: int) -> tuple[Axes, _Band]:
        cw, ch = self.cell
        x0 = self.origin[0] + (i % self.ncols) * cw
        y0 = self.origin[1] + (self.rows - 1 - i // self.ncols) * ch
        head = (title_lines * TITLE_PT * 1.2 + 6) * PT_IN + 0.04  # the title and its pad
        foot = _BELOW_PT * PT_IN + 0.04
        inner = ch - head - foot - _GAP_IN
        left, width = x0 + 0.9, cw - 0.9 - _RIGHT_IN  # provisional: fit_left sets them
        w, h = self.fig.get_figwidth(), self.fig.get_figheight()
        ax = self.fig.add_axes((left / w, (y0 + foot) / h, width / w, (inner + _GAP_IN) / h))
        low = inner / 4  # the counts' band, inches
        per_in = 1.04 / (inner - low)  # the rates' -0.02..1.02 over the rest
        lo = -0.02 - (low + _GAP_IN) * per_in
        band = _Band(lo=lo, hi=lo + low * per_in, rule=lo + (low + _GAP_IN / 2) * per_in,
                     rates_mid=1 - (inner - low) / 2 / (inner + _GAP_IN),
                     counts_mid=low / 2 / (inner + _GAP_IN),
                     nbins=max(1, int(low * 72 // (7 * 2))))  # fmt: skip
        return ax, band

    def axes(self, i: int) -> tuple[Axes, _Band]:
        return self._axes[i]

    def fit_left(self) -> None:
        """The first column's axes start past their y labels and tick labels (the widest of
        any of them, so the panels line up); the other columns' axes, which share the
        row's y scales and show no y labels, ``_SHARED_LEFT_IN`` past the axes before
        them; every axes equally wide. The axis labels are placed here, once (as
        :func:`fixed_labels` places them)."""
        from matplotlib.font_manager import FontProperties
        from matplotlib.transforms import ScaledTranslation

        first = [ax for ax, _ in self._axes[:: self.ncols]]
        labels = {t.get_text() for ax in first for t in ax.yaxis.get_ticklabels()}
        ticks = max(text_width_in(self.fig, s, FontProperties(size=7)) for s in labels)
        margin = left_margin_in(2 * 8 * 1.2, ticks)  # two lines of y label
        # every x tick label is one line of an arm's name at 7 pt: one height
        arm_in = tallest_in(self._axes[0][0].xaxis.get_ticklabels())
        w = self.fig.get_figwidth()
        # every column's axes equally wide: the first column's margin, then each axes and
        # the gap to the next (its right margin and the next one's left)
        step = (w - margin + _SHARED_LEFT_IN) / self.ncols
        dx = -((TICK_PAD_PT + LABEL_PAD_PT) * PT_IN + ticks)
        for i, (ax, band) in enumerate(self._axes):
            left = margin + (i % self.ncols) * step
            box = ax.get_position()
            ax.set_position((left / w, box.y0, (step - _SHARED_LEFT_IN - _RIGHT_IN) / w,
                             box.height))  # fmt: skip
            fixed_labels(ax, ytick_in=None, xtick_in=arm_in)
            if i % self.ncols == 0:
                shift = ax.transAxes + ScaledTranslation(dx, 0, self.fig.dpi_scale_trans)
                ax.yaxis.set_label_coords(0.0, band.rates_mid, transform=shift)
                ax.text(0.0, band.counts_mid, f"unrequested\nper {PER_EPISODES} ep.",
                        fontsize=8, transform=shift, rotation="vertical", rotation_mode="anchor",
                        ha="center", va="bottom")  # fmt: skip


def _peak(mine: Sequence[ChannelPoint]) -> float:
    """The top of a panel's counts: its highest unrequested count (at least 1), and room
    above it."""
    return max([1.0, *(d.y for d in mine if isinstance(d, UnrequestedCount))]) * 1.15


def _channel_panel(
    ax: Axes,
    band: _Band,
    mine: Sequence[ChannelPoint],
    channels: Sequence[str],
    peak: float,
    labelled: bool,
) -> None:
    """One configuration's panel of Figure 5(a): each channel's rate over its label with
    its interval above, the unrequested count per 128 episodes in the band below (from
    -0.06 of ``peak`` to ``peak``, a zero above the band's floor), arms on x; the y tick
    labels and the rates' label where ``labelled`` (the row's first panel)."""
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
    ax.tick_params(labelsize=7, labelleft=labelled)
    ax.grid(axis="y", alpha=0.3)
    _intervals(ax, [(color, pts) for color, pts in series if pts])
    low, high = -0.06 * peak, peak
    ax.plot([xs.index(d.x) for d in unreq], [band.y(d.y, low, high) for d in unreq], "s",
            color="0.3", markersize=5, label=f"unrequested per {PER_EPISODES} episodes")  # fmt: skip
    ax.axhline(band.rule, color="black", linewidth=_frame_width())
    counts = _count_ticks(low, high, band.nbins)
    units = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]  # the rates' ticks, as unit_axis gives them
    ax.set_ylim(band.lo, 1.02)
    ax.set_yticks([band.y(v, low, high) for v, _ in counts] + units,
                  [label for _, label in counts] + [f"{v:.1f}" for v in units])  # fmt: skip
    if labelled:
        ax.set_ylabel("errors / label turns\n(Wilson 95% CI)", fontsize=8)
    ax.set_xticks(range(len(xs)), xs, fontsize=7)
    ax.set_xlim(-0.6, len(xs) - 0.4)
    ax.set_xlabel("arm", fontsize=8)


def _frame_width() -> float:
    """The axes' frame line width (the rule between rates and counts is drawn as one)."""
    import matplotlib as mpl

    return float(mpl.rcParams["axes.linewidth"])


def _intervals(ax: Axes, series: Sequence[tuple[str, Sequence[tuple[float, ChannelRate]]]]) -> None:
    """Each channel's rates as points (4 pt circles) with their Wilson intervals (bars
    with 2 pt caps): what ``errorbar(x, y, yerr, fmt="o", markersize=4, capsize=2,
    color=...)`` per channel draws, pixel for pixel, as fewer artists
    (:func:`scoring.report.intervals.interval_series`; #50: the 50 ``errorbar`` calls were a
    sixth of this figure's drawing)."""
    for color, pts in series:
        interval_series(ax, [x for x, _ in pts], [d.y for _, d in pts],
                        [(d.lo, d.hi) for _, d in pts], color=color, capsize=2, markersize=4)  # fmt: skip


def _count_ticks(low: float, high: float, nbins: int) -> list[tuple[float, str]]:
    """The counts' ticks between *low* and *high* and their labels: those matplotlib's
    automatic locator (``AutoLocator``: *nbins* as an axis as tall as the band holds) and
    formatter show on an axis of that view."""
    from matplotlib.ticker import MaxNLocator, ScalarFormatter

    locator = MaxNLocator(nbins, steps=[1, 2, 2.5, 5, 10])
    values = [float(v) for v in locator.tick_values(low, high) if low <= v <= high]
    formatter = ScalarFormatter()
    formatter.create_dummy_axis()
    formatter.axis.set_view_interval(low, high)  # type: ignore[union-attr]
    return list(zip(values, formatter.format_ticks(values), strict=True))
