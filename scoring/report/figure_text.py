"""Text that fits its figure: titles and labels wrapped to a width, legends in as many
columns as the figure holds, short configuration labels, and the check that no text of a
figure reaches past its edges (matplotlib's tight bounding box of every text artist).

Pure (no file is written); matplotlib is imported on first use.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure
    from matplotlib.font_manager import FontProperties
    from matplotlib.legend import Legend
    from matplotlib.text import Text

__all__ = [
    "EDGE_IN",
    "FIGURE_DPI",
    "LABEL_PAD_PT",
    "PT_IN",
    "TICK_PAD_PT",
    "clipped_texts",
    "covered_labels",
    "fixed_labels",
    "left_margin_in",
    "legend_below",
    "new_figure",
    "place_axes",
    "short_labels",
    "size_in",
    "tallest_in",
    "text_width_in",
    "unit_axis",
    "wrap",
]

# The mean advance of a character of the default sans-serif font, in ems (a little above
# DejaVu Sans's, so that a wrapped line stays inside its width)
_EM_PER_CHAR = 0.62
_SLACK_PX = 1.0  # antialiasing: a glyph's box may touch the edge by a pixel


def wrap(text: str, width_in: float, fontsize: float) -> str:
    """*text* broken into lines no wider than *width_in* inches at *fontsize* points
    (at word boundaries, a longer word broken); the lines of *text* are kept."""
    chars = max(8, int(width_in * 72 / (fontsize * _EM_PER_CHAR)))
    return "\n".join(
        textwrap.fill(line, chars, break_on_hyphens=False) if line else line
        for line in text.split("\n")
    )


def _renderer(fig: Figure) -> RendererBase:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    renderer: RendererBase = canvas.get_renderer()  # type: ignore[no-untyped-call]
    return renderer


def text_width_in(fig: Figure, text: str, font: FontProperties) -> float:
    """The width of one line of *text* in *font* on *fig*'s canvas, in inches."""
    width, _, _ = _renderer(fig).get_text_width_height_descent(text, font, ismath=False)
    return float(width) / fig.dpi


def size_in(artist: Text | Legend) -> tuple[float, float]:
    """The width and height of *artist* (a text, a legend) as its figure lays it out, in
    inches."""
    fig = artist.get_figure(root=True)
    assert fig is not None
    box = artist.get_window_extent(_renderer(fig))
    return float(box.width) / fig.dpi, float(box.height) / fig.dpi


# The dpi the report's figures are drawn at (runner.rundir.plots writes their PNGs at it): a
# figure made at it measures its texts on the canvas that then draws it (#50)
FIGURE_DPI = 120


def new_figure(width: float, height: float, constrained: bool = False) -> Figure:
    """A new figure of *width* x *height* inches at :data:`FIGURE_DPI`; constrained layout
    only where asked (the report's figures place their axes once, #50)."""
    from matplotlib.figure import Figure

    return Figure(
        figsize=(width, height), dpi=FIGURE_DPI, layout="constrained" if constrained else None
    )


PT_IN = 1 / 72  # a point in inches
EDGE_IN = 0.06  # inches kept clear at a figure's edges


def unit_axis(ax: Axes) -> None:
    """*ax*'s y axis from 0 to 1 with a little room (-0.02 to 1.02) and the ticks matplotlib's
    automatic locator shows there, 0 to 1 by 0.2, given fixed: the same labels, without the
    two ticks it makes outside the view at every draw (#50)."""
    ax.set_ylim(-0.02, 1.02)
    ax.set_yticks([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])


TICK_PAD_PT = 3.5 + 3.5  # matplotlib's tick length and tick label pad
LABEL_PAD_PT = 4.0  # matplotlib's axis label pad


def fixed_labels(ax: Axes, *, ytick_in: float | None, xtick_in: float | None) -> None:
    """*ax*'s axis labels placed once where matplotlib places them (past the tick labels,
    :data:`LABEL_PAD_PT` away), from the widest y tick label's width *ytick_in* and the x
    tick labels' height *xtick_in* (inches; None: that label left to matplotlib), instead
    of measuring every tick label again at each draw (#50)."""
    from matplotlib.transforms import ScaledTranslation

    fig = ax.get_figure(root=True)
    assert fig is not None
    if ytick_in is not None:
        dx = -((TICK_PAD_PT + LABEL_PAD_PT) * PT_IN + ytick_in)
        shift = ScaledTranslation(dx, 0, fig.dpi_scale_trans)
        ax.yaxis.set_label_coords(0.0, 0.5, transform=ax.transAxes + shift)
    if xtick_in is not None:
        dy = -((TICK_PAD_PT + LABEL_PAD_PT) * PT_IN + xtick_in)
        shift = ScaledTranslation(0, dy, fig.dpi_scale_trans)
        ax.xaxis.set_label_coords(0.5, 0.0, transform=ax.transAxes + shift)


def left_margin_in(ylabel_pt: float, ticks_in: float) -> float:
    """An axes' left margin in inches: the figure's edge, a y label of *ylabel_pt* points
    and its pad, the ticks and their pad, tick labels *ticks_in* wide."""
    return EDGE_IN + (ylabel_pt + 4 + 3.5 + 3.5) * PT_IN + ticks_in + 0.04


def place_axes(
    ax: Axes, legend: Legend | None, *, title_pt: float, below_pt: float, ylabel_pt: float
) -> None:
    """*ax* as the one axes of its figure, placed once (no layout engine, #50): a title of
    *title_pt* points above it, *below_pt* points of tick labels and x label under it, then
    the figure's *legend*; on the left its y label's *ylabel_pt* points, the ticks and the
    widest y tick label; its axis labels placed with them (:func:`fixed_labels`)."""
    from matplotlib.font_manager import FontProperties

    fig = ax.get_figure(root=True)
    assert fig is not None
    w, h = fig.get_figwidth(), fig.get_figheight()
    size = ax.yaxis.get_ticklabels()[0].get_fontsize() if ax.yaxis.get_ticklabels() else 10
    font = FontProperties(size=size)
    ticks = max(
        (text_width_in(fig, t.get_text(), font) for t in ax.yaxis.get_ticklabels()), default=0.0
    )
    left = left_margin_in(ylabel_pt, ticks)
    legend_in = legend.get_window_extent().height / fig.dpi if legend is not None else 0.0
    bottom = EDGE_IN + legend_in + below_pt * PT_IN + 0.06
    top = EDGE_IN + (title_pt + 6) * PT_IN + 0.04
    right = 0.15
    ax.set_position((left / w, bottom / h, 1 - (left + right) / w, 1 - (bottom + top) / h))
    fixed_labels(ax, ytick_in=ticks, xtick_in=tallest_in(ax.xaxis.get_ticklabels()))


def tallest_in(labels: Sequence[Text]) -> float | None:
    """The height of the tallest of *labels* (the one of most lines), in inches; None
    without labels."""
    tallest = max(labels, key=lambda t: t.get_text().count("\n"), default=None)
    return None if tallest is None else size_in(tallest)[1]


def legend_below(
    fig: Figure,
    handles: Sequence[Artist],
    labels: Sequence[str],
    fontsize: float,
) -> Legend | None:
    """A legend under the figure's axes in the most columns (at most one row of all the
    entries) that fit the figure's width; None without entries."""
    if not labels:
        return None
    renderer = _renderer(fig)
    width = fig.bbox.width
    for ncols in range(len(labels), 0, -1):
        legend = fig.legend(
            list(handles), list(labels), fontsize=fontsize, ncols=ncols,
            loc="outside lower center",
        )  # fmt: skip
        if ncols == 1 or legend.get_window_extent(renderer).width <= 0.97 * width:
            return legend
        legend.remove()
    return None  # pragma: no cover


def clipped_texts(fig: Figure) -> list[str]:
    """The visible texts of *fig* (titles, labels, ticks, legends, annotations) whose tight
    bounding box reaches past the figure's edges once drawn; empty when all fit."""
    from matplotlib.text import Text

    renderer = _renderer(fig)
    fig.draw(renderer)
    box = fig.bbox
    hidden = _undrawn_tick_labels(fig)
    out = []
    for t in fig.findobj(Text):
        assert isinstance(t, Text)
        if not t.get_visible() or not t.get_text().strip() or id(t) in hidden:
            continue
        b = t.get_window_extent(renderer)
        if (
            b.x0 < box.x0 - _SLACK_PX
            or b.y0 < box.y0 - _SLACK_PX
            or b.x1 > box.x1 + _SLACK_PX
            or b.y1 > box.y1 + _SLACK_PX
        ):
            out.append(t.get_text())
    return out


def covered_labels(fig: Figure) -> list[str]:
    """The x labels and x tick labels of *fig*'s axes that an axes' own legend overlaps
    once drawn (a legend under the axes must sit under its label); empty when none is."""
    renderer = _renderer(fig)
    fig.draw(renderer)
    hidden = _undrawn_tick_labels(fig)
    out = []
    for ax in fig.get_axes():
        legend = ax.get_legend()
        if legend is None:
            continue
        box = legend.get_window_extent(renderer)
        texts = [ax.xaxis.label, *(t.label1 for t in ax.xaxis.get_major_ticks())]
        for t in texts:
            shown = t.get_visible() and t.get_text().strip() and id(t) not in hidden
            if shown and box.overlaps(t.get_window_extent(renderer)):
                out.append(t.get_text())
    return out


def _undrawn_tick_labels(fig: Figure) -> set[int]:
    """The tick labels matplotlib keeps but does not draw: those of ticks outside the
    axis's view limits."""
    out: set[int] = set()
    for ax in fig.get_axes():
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                loc = tick.get_loc()
                if loc is None or not lo - 1e-9 <= loc <= hi + 1e-9:
                    out |= {id(tick.label1), id(tick.label2)}
    return out


def short_labels(labels: Sequence[str]) -> list[str]:
    """Configuration labels (space-separated fields, :func:`protocol.config.config_label`)
    without the fields they all share: ``procurement amended`` / ``release original``
    for four configurations of one model and graph. One label (or labels that differ in no
    field) comes back whole."""
    fields = [label.split() for label in labels]
    shared = set.intersection(*(set(f) for f in fields)) if fields else set()
    out = [" ".join(x for x in f if x not in shared) for f in fields]
    if len(set(out)) < len(out) or not all(out):
        return list(labels)
    return out
