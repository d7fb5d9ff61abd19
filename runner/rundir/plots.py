"""The report's plots drawn as PNG bytes, split between two processes on a machine with two
cores (#50): drawing a run's figures costs seconds of matplotlib whatever the run's size,
and the figures are independent of one another. Each figure is drawn and saved whole in one
process, so its PNG is the one a serial draw writes, byte for byte.
"""

from __future__ import annotations

import gc
import io
import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from scoring.analyses.base import Analyses
from scoring.analyses.corruption_replay import CORRUPTION
from scoring.gc_pause import paused_gc
from scoring.report.figure_text import FIGURE_DPI
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
# Drawn costliest first (the Python calls of drawing each on the bench's 14,040-episode log,
# relative to Figure 1's; #50) by whichever process is free next: the two finish together,
# whatever figures are present
_COST = {"figure5a": 11.0, "channels": 4.2, "figure4": 2.7, "figure5b": 2.0}
_COST_OTHER = 1.6  # the success figures; a figure not listed
_COST_RUNGS = 1.0  # Figures 1 and 6


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


DPI = FIGURE_DPI  # the report's figures are made at it (their texts measured on this canvas)
# zlib level of the PNGs: 3 compresses an RGB figure to about the size level 6 (Pillow's
# default) made of its RGBA pixels, in about half the CPU (#50)
PNG_LEVEL = 3


def _png(fig: Any) -> bytes:
    """The figure's PNG at ``DPI``, drawn once (#50). ``savefig`` with a layout engine draws
    the whole figure with drawing disabled only to run the layout, then again for the
    pixels; here the layout runs alone, on the same Agg canvas at the same dpi, then the
    canvas draws as ``savefig``'s second draw does (under the savefig defaults; other
    settings: ``savefig`` itself) and :func:`_encode` writes its pixels."""
    import matplotlib as mpl

    engine = fig.get_layout_engine()
    rc = mpl.rcParams
    defaults = (rc["savefig.facecolor"], rc["savefig.edgecolor"], rc["savefig.bbox"]) == (
        "auto",
        "auto",
        None,
    )
    if not fig.axes or not defaults:
        png = io.BytesIO()
        fig.savefig(png, dpi=DPI, format="png", pil_kwargs={"compress_level": PNG_LEVEL})
        return png.getvalue()
    from matplotlib import cbook
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    # the canvas the figure measured its texts on, if it has one: its renderer is reused
    # when the dpi is the same (#50: a renderer is the figure's whole buffer)
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    fig.dpi = DPI
    with cbook._setattr_cm(canvas, _device_pixel_ratio=1, _is_saving=True):
        if engine is not None:
            engine.execute(fig)
            fig.set_layout_engine("none")  # laid out: the draw keeps these positions
        canvas.draw()  # type: ignore[no-untyped-call]  # matplotlib's, unannotated
        return _encode(canvas.buffer_rgba())  # type: ignore[no-untyped-call]


def _encode(rgba: Any) -> bytes:
    """Agg's RGBA pixels as ``print_png`` writes them (the same ``Software`` text and dpi),
    but as RGB when every pixel is opaque (as a figure on its white face is: a quarter fewer
    bytes to compress, the same image) and at zlib level ``PNG_LEVEL``."""
    import matplotlib as mpl
    import numpy as np
    from PIL import Image, PngImagePlugin

    pixels = np.asarray(rgba)
    image = Image.frombuffer(
        "RGBA", (pixels.shape[1], pixels.shape[0]), pixels, "raw", "RGBA", 0, 1
    )
    if image.getchannel("A").getextrema() == (255, 255):
        image = image.convert("RGB")
    info = PngImagePlugin.PngInfo()
    info.add_text("Software", f"Matplotlib version{mpl.__version__}, https://matplotlib.org/")
    out = io.BytesIO()
    image.save(out, format="png", dpi=(DPI, DPI), pnginfo=info, compress_level=PNG_LEVEL)
    return out.getvalue()


def _draw_some(
    lines: Sequence[ResultLine], analyses: Analyses, names: Sequence[str]
) -> dict[str, Png | None]:
    with paused_gc():  # as _take draws
        return {name: _draw(lines, analyses, name) for name in names}


_next: Any = None  # the forked process's handle on the shared next-figure counter


def _share(counter: Any) -> None:
    global _next
    _next = counter


def _forked(counter: Any) -> None:
    """The figure child's start: the shared counter, and no cyclic collector for the rest
    of its life. It draws its share and exits, its figures' cycles (about 40 thousand
    objects, a few MB) with it, instead of collecting them (0.05-0.1 s) before its PNGs
    come back (#50)."""
    _share(counter)
    gc.disable()


def _take(
    lines: Sequence[ResultLine], analyses: Analyses, names: Sequence[str]
) -> dict[str, Png | None]:
    """Draw the next figure not yet taken by either process until none is left. The cyclic
    collector is paused meanwhile: a figure's thousands of artists made it run about 190
    times over the report's figures, walking the scored run's objects too (5% of the
    drawing's CPU, #50); a figure's cycles wait for the end (a few MB; the child never
    collects them, :func:`_forked`)."""
    out: dict[str, Png | None] = {}
    with paused_gc():
        while True:
            with _next.get_lock():
                i = _next.value
                _next.value = i + 1
            if i >= len(names):
                return out
            out[names[i]] = _draw(lines, analyses, names[i])


def _cost(name: str) -> float:
    return _COST.get(name, _COST_RUNGS if name in ("figure1", "figure6") else _COST_OTHER)


def draw_pngs(lines: Sequence[ResultLine], analyses: Analyses, jobs: int = 1) -> dict[str, Png]:
    """The report's PNGs by name (``success``, ``success-decline-aware``, ``channels``, then
    each paper figure whose cells are present, by its name; the file is ``<stem>-<name>.png``)
    in the report's order. With ``jobs`` > 1 (and ``fork``) the figures are drawn in two
    processes, each taking the costliest figure left. Raises ImportError without matplotlib."""
    names = [suffix for suffix, _ in _OURS] + [f.name for f in FIGURES.entries()]
    if jobs > 1 and "fork" in multiprocessing.get_all_start_methods():
        preload_plots()
        import matplotlib.figure  # noqa: F401  (ImportError here, before the fork)

        queue = sorted(names, key=lambda n: -_cost(n))  # stable: the report's order on ties
        # forked: the child knows the figures this process registered, and the counter
        context = multiprocessing.get_context("fork")
        counter = context.Value("i", 0)
        _share(counter)
        with ProcessPoolExecutor(
            1, mp_context=context, initializer=_forked, initargs=(counter,)
        ) as pool:
            theirs = pool.submit(_take, lines, analyses, queue)
            try:
                drawn = _take(lines, analyses, queue)
                drawn.update(theirs.result())
            finally:
                _share(None)
    else:
        drawn = _draw_some(lines, analyses, names)
    return {n: png for n in names if (png := drawn[n]) is not None}
