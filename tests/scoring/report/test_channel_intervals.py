"""Figure 5(a)'s rates with their intervals (#50): one collection of every channel's bars
and two lines of markers per channel draw the pixels one ``errorbar`` call per channel
drew."""

from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from scoring.report.channel_panels import _intervals
from scoring.report.figure_data import ChannelRate

_CHANNELS = ("re_execution", "superseded", "premature", "omission", "refused_redo")
_ARMS = ("raw", "checklist", "ledger", "directive", "enforce", "hybrid")


def _series() -> list[tuple[str, list[tuple[float, ChannelRate]]]]:
    out = []
    width = 0.8 / len(_CHANNELS)
    for j, ch in enumerate(_CHANNELS):
        pts = []
        for i, arm in enumerate(_ARMS):
            if (i + j) % 4 == 3:
                continue  # a channel without a label in that cell: no point
            y = ((i * 7 + j * 3) % 10) / 10
            lo, hi = max(0.0, y - 0.05 - 0.01 * i), min(1.0, y + 0.03 + 0.02 * j)
            rate = ChannelRate(panel="p", series=ch, x=arm, y=y, lo=lo, hi=hi, errors=1, n=10)
            pts.append((i + (j - (len(_CHANNELS) - 1) / 2) * width, rate))
        out.append((f"C{j}", pts))
    return out


def _pixels(draw: str) -> np.ndarray:
    fig = Figure(figsize=(6.4, 3.0), dpi=120)
    ax = fig.add_axes((0.1, 0.1, 0.85, 0.8))
    series = _series()
    if draw == "errorbar":
        for color, pts in series:
            ax.errorbar([x for x, _ in pts], [d.y for _, d in pts],
                        yerr=[[d.y - d.lo for _, d in pts], [d.hi - d.y for _, d in pts]],
                        fmt="o", markersize=4, capsize=2, color=color)  # fmt: skip
    else:
        _intervals(ax, series)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlim(-0.6, len(_ARMS) - 0.4)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # type: ignore[no-untyped-call]
    return np.asarray(canvas.buffer_rgba()).copy()  # type: ignore[no-untyped-call]


def test_intervals_draw_errorbars_pixels() -> None:
    expected, drawn = _pixels("errorbar"), _pixels("intervals")
    assert (expected != 255).any()  # something drawn
    assert (drawn == expected).all()
