"""``figure_text.unit_axis`` gives a 0-1 axis the ticks and labels matplotlib's automatic
locator draws there, without the ones it makes outside the view (#50)."""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from scoring.report.figure_text import unit_axis


def _drawn(fixed: bool) -> tuple[list[float], list[str], int, bytes]:
    fig = Figure(figsize=(4.0, 3.0))
    ax = fig.add_subplot()
    ax.errorbar([0, 1], [0.3, 0.7], yerr=[[0.1, 0.1], [0.1, 0.1]], fmt="o")
    if fixed:
        unit_axis(ax)
    else:
        ax.set_ylim(-0.02, 1.02)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # type: ignore[no-untyped-call]
    lo, hi = ax.get_ylim()
    ticks = [t for t in ax.yaxis.get_major_ticks() if lo <= t.get_loc() <= hi]
    return (
        [t.get_loc() for t in ticks],
        [t.label1.get_text() for t in ticks],
        len(ax.yaxis.get_major_ticks()),
        bytes(canvas.buffer_rgba()),  # type: ignore[no-untyped-call]
    )


def test_unit_axis_draws_the_automatic_ticks_and_makes_no_others() -> None:
    auto_locs, auto_labels, auto_made, auto_pixels = _drawn(fixed=False)
    locs, labels, made, pixels = _drawn(fixed=True)
    assert labels == auto_labels and pixels == auto_pixels  # the same figure, pixel for pixel
    assert locs == [round(x, 12) for x in auto_locs]  # the locator's sums of 0.2
    assert labels == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
    assert made == len(locs) < auto_made
