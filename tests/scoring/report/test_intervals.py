"""Points with intervals made directly (#50): the pixels ``errorbar`` drew, the legend's
entries too, for series that overlap one another."""

from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from scoring.report.intervals import interval_series


def _series() -> list[tuple[list[float], list[float], list[tuple[float, float]]]]:
    out = []
    for j in range(4):
        xs = [i + 0.05 * j for i in range(5)]  # series 0.05 apart: their markers overlap
        ys = [((i * 7 + j * 3) % 10) / 10 for i in range(5)]
        bounds = [(max(0.0, y - 0.1 - 0.02 * j), min(1.0, y + 0.05 + 0.01 * i))
                  for i, y in enumerate(ys)]  # fmt: skip
        out.append((xs, ys, bounds))
    return out


def _pixels(draw: str) -> np.ndarray:
    fig = Figure(figsize=(5.0, 3.0), dpi=120)
    ax = fig.add_axes((0.1, 0.3, 0.85, 0.65))
    for j, (xs, ys, bounds) in enumerate(_series()):
        if draw == "errorbar":
            ax.errorbar(xs, ys, yerr=[[y - lo for y, (lo, _) in zip(ys, bounds, strict=True)],
                                      [hi - y for y, (_, hi) in zip(ys, bounds, strict=True)]],
                        fmt="o", capsize=3, label=f"series {j}")  # fmt: skip
        else:
            interval_series(ax, xs, ys, bounds, color=f"C{j}", capsize=3, label=f"series {j}")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlim(-0.6, 4.6)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=2, fontsize=6)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # type: ignore[no-untyped-call]
    return np.asarray(canvas.buffer_rgba()).copy()  # type: ignore[no-untyped-call]


def test_interval_series_draws_errorbars_pixels() -> None:
    expected, drawn = _pixels("errorbar"), _pixels("series")
    assert (expected != 255).any()  # something drawn
    assert (drawn == expected).all()
