"""The report's Agg canvas with cached text (#50) draws and measures text exactly as
matplotlib's own Agg canvas does: the same pixels for strings at any fraction of a pixel,
turned, on several lines, unantialiased, drawn again from the caches; the same extents and
line metrics; and its caches start again when the font settings change."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from scoring.report import text_cache
from scoring.report.text_cache import canvas


def _figure() -> Figure:
    fig = Figure(figsize=(3.3, 2.7), dpi=120)
    ax = fig.add_axes((0.23, 0.21, 0.61, 0.57))
    ax.set_title("a title on\ntwo lines, 0.2 0.4", fontsize=8, y=1.0)
    ax.set_ylabel("errors / label turns\n(Wilson 95% CI)", fontsize=8)
    ax.set_xticks(range(5), ["raw", "checklist", "ledger", "directive", "enforce"], fontsize=7)
    ax.set_yticks([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.tick_params(labelsize=7)
    # the same strings at many fractions of a pixel, turned and not antialiased too
    for i in range(12):
        ax.text(0.13 * i + 0.011 * i * i, 0.07 * i, "re-execution 0.2", fontsize=6 + i % 3)
    ax.text(0.5, 0.5, "turned by 30 degrees", rotation=30, fontsize=7)
    ax.text(0.2, 0.9, "not antialiased", antialiased=False, fontsize=7)
    ax.text(0.1, 0.3, r"math $\epsilon = 0.1$", fontsize=7)  # matplotlib's own path
    fig.legend(["a", "b"], loc="outside lower center", ncols=2, fontsize=7)
    return fig


def _plain(fig: Figure) -> np.ndarray:
    agg = FigureCanvasAgg(fig)
    agg.draw()  # type: ignore[no-untyped-call]
    return np.asarray(agg.buffer_rgba()).copy()  # type: ignore[no-untyped-call]


def _cached(fig: Figure) -> np.ndarray:
    agg = canvas(fig)
    agg.draw()  # type: ignore[no-untyped-call]
    return np.asarray(agg.buffer_rgba()).copy()  # type: ignore[no-untyped-call]


def test_cached_text_is_drawn_pixel_for_pixel_and_again_from_the_caches() -> None:
    assert text_cache._GLYPHS  # matplotlib's glyph-at-a-time Agg text (3.11, installed)
    expected = _plain(_figure())
    first = _cached(_figure())
    assert (first == expected).all()
    glyphs, layouts = len(text_cache._bitmaps), len(text_cache._layouts)
    assert glyphs > 0 and layouts > 0
    again = _cached(_figure())
    assert (again == expected).all()
    # drawn again with no new layout or glyph: the second figure's text came from the caches
    assert (len(text_cache._bitmaps), len(text_cache._layouts)) == (glyphs, layouts)


def test_cached_measures_are_matplotlibs() -> None:
    fig = _figure()
    plain = FigureCanvasAgg(fig).get_renderer()  # type: ignore[no-untyped-call]
    texts = [t for t in fig.findobj(Text) if isinstance(t, Text)]
    before = [t.get_window_extent(plain).bounds for t in texts]
    cached = canvas(fig).get_renderer()  # type: ignore[no-untyped-call]
    after = [t.get_window_extent(cached).bounds for t in texts]
    assert before == after and len(before) > 20
    prop = texts[0].get_fontproperties()
    for s in ("0.2", "checklist", "a longer label, with a comma"):
        want = plain.get_text_width_height_descent(s, prop, ismath=False)
        assert cached.get_text_width_height_descent(s, prop, ismath=False) == want
        assert cached.get_text_width_height_descent(s, prop, ismath=False) == want  # kept


def test_the_caches_start_again_when_the_font_settings_change() -> None:
    _cached(_figure())
    with mpl.rc_context({"font.family": "DejaVu Serif"}):
        expected = _plain(_figure())
        assert (_cached(_figure()) == expected).all()
    assert (_cached(_figure()) == _plain(_figure())).all()
