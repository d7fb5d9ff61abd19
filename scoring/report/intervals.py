"""Points with their intervals, as ``errorbar`` draws them, from fewer calls (#50).

``errorbar`` made each series' points, bars and caps through the plotting machinery (the
format string, the property cycle, ``vlines``, two lines of caps); a series here is made
directly as the same three artists: its bars one collection, its caps one line of markers,
its points another, with ``errorbar``'s styles and zorders (bars and caps under every
series' points, in the series' order), and the same container for the legend. Pure
(matplotlib is imported on first use).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["interval_series"]


def interval_series(
    ax: Axes,
    xs: Sequence[float],
    ys: Sequence[float],
    bounds: Sequence[tuple[float, float]],
    *,
    color: str,
    capsize: float,
    markersize: float | None = None,
    label: str | None = None,
) -> None:
    """One series on *ax*: points at (*xs*, *ys*), circles of *markersize* points (None:
    matplotlib's default), each with a bar from its ``bounds`` (low, high) capped
    ``capsize`` points either side; what
    ``ax.errorbar(xs, ys, yerr=[y - low, high - y], fmt="o", markersize=markersize,
    capsize=capsize, color=color, label=label)`` draws, pixel for pixel, its legend entry
    too. The caller sets both axes' limits (no autoscaling)."""
    from matplotlib.collections import LineCollection
    from matplotlib.container import ErrorbarContainer
    from matplotlib.lines import Line2D

    bars = LineCollection(
        [[(x, lo), (x, hi)] for x, (lo, hi) in zip(xs, bounds, strict=True)],
        colors=[color],
        zorder=2,
        label="_nolegend_",
    )
    ax.add_collection(bars, autolim=False)
    caps = Line2D(
        [*xs, *xs],
        [lo for lo, _ in bounds] + [hi for _, hi in bounds],
        marker="_",
        linestyle="none",
        markersize=2.0 * capsize,
        color=color,
        markeredgecolor=color,
        zorder=2,
        label="_nolegend_",
    )
    points = Line2D(
        list(xs), list(ys), marker="o", linestyle="None", markersize=markersize, color=color,
        zorder=2.1, label="_nolegend_",
    )  # fmt: skip
    ax.add_line(points)
    ax.add_line(caps)
    container = ErrorbarContainer(
        (points, (caps,), (bars,)), has_xerr=False, has_yerr=True, label=label
    )
    ax.add_container(container)
