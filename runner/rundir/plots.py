"""The report's plots drawn as PNG bytes, split between two processes on a machine with two
cores (#50): drawing a run's figures costs seconds of matplotlib whatever the run's size,
and the figures are independent of one another. Each figure is drawn and saved whole in one
process, so its PNG is the one a serial draw writes, byte for byte.
"""

from __future__ import annotations

import io
import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from scoring.analyses.base import Analyses
from scoring.analyses.corruption_replay import CORRUPTION
from scoring.report.markdown import figure_channels, figure_success
from scoring.report.paper_figures import FIGURES, paper_figures
from scoring.results.lines import ResultLine

__all__ = ["Png", "draw_pngs", "preload_plots"]

Png = tuple[str, bytes, Any]  # (caption, PNG bytes, the paper figure's points or None)

# The report's own figures (ours), in the report's order, before the paper's: suffix, caption
_OURS = (
    ("success", "Strict success per arm (primary scoring)"),
    ("success-decline-aware", "Strict success per arm (decline-aware)"),
    (
        "channels",
        "Errors per episode by channel, every cell (ours; the paper's Figure 5(a) is figure5a)",
    ),
)
# Drawn first when split (the costliest: a panel per configuration, a bar per cell)
_HEAVY = ("figure5a", "channels", "figure4")


def preload_plots() -> None:
    """Import matplotlib's drawing modules now (while the scoring workers run), so the
    figures' processes, forked after it, start drawing at once; nothing without the plots
    extra."""
    try:
        import matplotlib.backends.backend_agg
        import matplotlib.figure  # noqa: F401
    except ImportError:
        pass


def _draw(lines: Sequence[ResultLine], analyses: Analyses, name: str) -> Png | None:
    """One figure as a PNG (``name``: one of :data:`_OURS`'s suffixes or a paper figure's
    name); None when its cells are absent. Raises ImportError without matplotlib."""
    for suffix, caption in _OURS:
        if name == suffix:
            scoring = "decline_aware" if suffix == "success-decline-aware" else "strict"
            fig = figure_channels(lines) if suffix == "channels" else figure_success(lines, scoring)
            return caption, _png(fig), None
    figure = next(f for f in FIGURES.entries() if f.name == name)
    drawn = paper_figures(lines, analyses.of(CORRUPTION), [figure]).get(name)
    if drawn is None:
        return None
    caption, fig, points = drawn
    return caption, _png(fig), points


DPI = 120


def _png(fig: Any) -> bytes:
    """``fig.savefig(png, dpi=DPI, format="png")``'s bytes, the figure drawn once instead of
    twice (#50). With a layout engine, ``savefig`` draws the whole figure with drawing
    disabled only to run the layout, then draws it again, the layout off, for the pixels.
    Here the layout runs alone, on the same Agg canvas at the same dpi, then the canvas
    prints the PNG as ``savefig``'s second draw does (under the savefig defaults; other
    settings, or no layout engine: ``savefig`` itself)."""
    import matplotlib as mpl

    png = io.BytesIO()
    engine = fig.get_layout_engine()
    rc = mpl.rcParams
    defaults = (rc["savefig.facecolor"], rc["savefig.edgecolor"], rc["savefig.bbox"]) == (
        "auto",
        "auto",
        None,
    )
    if engine is None or not fig.axes or not defaults:
        fig.savefig(png, dpi=DPI, format="png")
        return png.getvalue()
    from matplotlib import cbook
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    fig.dpi = DPI
    with cbook._setattr_cm(canvas, _device_pixel_ratio=1, _is_saving=True):
        engine.execute(fig)
        fig.set_layout_engine("none")  # laid out: the draw keeps these positions
        canvas.print_png(png)  # type: ignore[no-untyped-call]  # matplotlib's, unannotated
    return png.getvalue()


def _draw_some(
    lines: Sequence[ResultLine], analyses: Analyses, names: Sequence[str]
) -> dict[str, Png | None]:
    return {name: _draw(lines, analyses, name) for name in names}


def draw_pngs(lines: Sequence[ResultLine], analyses: Analyses, jobs: int = 1) -> dict[str, Png]:
    """The report's PNGs by name (``success``, ``success-decline-aware``, ``channels``, then
    each paper figure whose cells are present, by its name; the file is ``<stem>-<name>.png``)
    in the report's order. With ``jobs`` > 1 (and ``fork``) the figures are drawn in two
    processes, the costliest first. Raises ImportError without matplotlib."""
    names = [suffix for suffix, _ in _OURS] + [f.name for f in FIGURES.entries()]
    if jobs > 1 and "fork" in multiprocessing.get_all_start_methods():
        preload_plots()
        import matplotlib.figure  # noqa: F401  (ImportError here, before the fork)

        heavy = [n for n in _HEAVY if n in names]
        first, rest = heavy[:1], [n for n in names if n not in heavy[:1]]
        # forked: the children know the figures this process registered
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(1, mp_context=context) as pool:
            theirs = pool.submit(_draw_some, lines, analyses, first)
            drawn = _draw_some(lines, analyses, rest)
            drawn.update(theirs.result())
    else:
        drawn = _draw_some(lines, analyses, names)
    return {n: png for n in names if (png := drawn[n]) is not None}
