"""The report's Agg canvas with its text work done once per process (#50): the same pixels.

A figure draws the same few strings many times (Figure 5(a): 226 texts, 31 distinct; the
tick labels of ten panels), and matplotlib lays each one out again (the glyphs and their
advances, about 35 us a character) and renders each glyph again through FreeType at every
draw. Both are pure functions of what they are given:

* a string's layout, of the font, its size, the dpi and the hinting flags: kept per
  process by those, and reused as it was computed;
* a glyph's bitmap, of the font, size, glyph, the transform's matrix and the fraction of a
  pixel (1/64ths) where the glyph's origin falls: FreeType renders a glyph moved by a whole
  pixel as the same bitmap moved by that pixel (its outline is translated in 26.6 fixed
  point before it is rasterised, after hinting), so a bitmap is kept by the fraction and
  placed by the whole pixels;
* a string's measured width, height and descent (what the layout of titles, labels and
  legends asks), by the same keys as its layout, and a font's line metrics (read from its
  tables for every text laid out, through ``Text``'s hook for a renderer's own).

Anything else (mathtext, TeX, a matplotlib without the glyph-at-a-time Agg text of 3.11)
goes to matplotlib's own code; the caches empty when a font or text setting changes.
:func:`canvas` is what :mod:`runner.rundir.plots` draws the PNGs on and
:mod:`scoring.report.figure_text` measures with. Pure (no I/O); matplotlib is imported
with this module, which the figures import on first use.
"""

from __future__ import annotations

import math
from typing import Any

from matplotlib import ft2font
from matplotlib.backends import backend_agg
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure

__all__ = ["canvas"]

# Agg's text drawn glyph by glyph from a cached layout (matplotlib 3.11's private API); the
# plain renderer's text where any piece is missing
_GLYPHS = (
    all(hasattr(RendererAgg, n) for n in ("_draw_text_glyphs_and_boxes", "_prepare_font"))
    and hasattr(backend_agg, "get_hinting_flag")
    and hasattr(ft2font, "RenderMode")
    and all(hasattr(ft2font.FT2Font, n) for n in ("_layout", "_render_glyph", "_set_transform"))
)
# matplotlib's Agg renderer and its module as the untyped code they are
_AGG: Any = RendererAgg
_HINTING: Any = getattr(backend_agg, "get_hinting_flag", None)
_MODES: Any = getattr(ft2font, "RenderMode", None)

# (font, glyph index, x, y) per glyph; a layout holds its fonts (and the bitmaps theirs),
# so no cached font is freed and its identity, in the keys, taken by another
_Laid = tuple[tuple[Any, int, float, float], ...]
# A glyph's bitmap: its font (checked: the key holds the font's identity), the coverage (a
# uint8 array) and its left / top edge in whole pixels from the glyph's origin's whole pixel
_Bitmap = tuple[Any, Any, int, int]  # with the font it is of

_layouts: dict[tuple[Any, ...], _Laid] = {}
_bitmaps: dict[tuple[Any, ...], _Bitmap] = {}
_extents: dict[tuple[Any, ...], tuple[float, float, float]] = {}
_heights: dict[tuple[Any, ...], tuple[float, float, float] | tuple[None, None, None]] = {}
_CAP = 20_000  # entries per cache: a run's figures hold a few thousand at most


def _remember(cache: dict[tuple[Any, ...], Any], key: tuple[Any, ...], value: Any) -> None:
    if len(cache) >= _CAP:
        cache.clear()
    cache[key] = value


_settings: list[Any] = [None]  # the text settings the caches hold entries under


def _fresh() -> None:
    """Empty the caches when matplotlib's font or text settings have changed since they
    were filled (a font's family resolves through them)."""
    import matplotlib as mpl

    now = sorted((k, repr(v)) for k, v in mpl.rcParams.items() if k.startswith(("font.", "text.")))
    if now != _settings[0]:
        for cache in (_layouts, _bitmaps, _extents, _heights):
            cache.clear()
        _settings[0] = now


def _font_key(prop: Any) -> tuple[Any, ...]:
    """What picks *prop*'s font and its size: the fields ``FontProperties`` hashes, as a
    tuple compared field by field (its own equality compares the hashes)."""
    return (tuple(prop.get_family()), prop.get_slant(), prop.get_variant(), prop.get_weight(),
            prop.get_stretch(), prop.get_size_in_points(), prop.get_file(),
            prop.get_math_fontfamily())  # fmt: skip


class _Renderer(RendererAgg):
    """Agg, drawing and measuring plain text through the process's caches."""

    def _get_font_height_metrics(self, prop: Any) -> tuple[Any, Any, Any]:
        """A font's ascent, descent and line gap at this dpi for :class:`~matplotlib.text.Text`'s
        line layout (its hook for a renderer's own metrics): the font's typographic (OS/2),
        else horizontal header (hhea), metrics scaled as ``Text`` scales them, read once
        per font and size; (None, None, None) when it has neither (``Text`` measures then)."""
        key = (_font_key(prop), self.dpi)
        kept = _heights.get(key)
        if kept is None:
            kept = _height_metrics(prop, self.dpi)
            _remember(_heights, key, kept)
        return kept

    def get_text_width_height_descent(
        self, s: str, prop: Any, ismath: Any
    ) -> tuple[float, float, float]:
        if ismath or not _GLYPHS:
            return _AGG.get_text_width_height_descent(self, s, prop, ismath)  # type: ignore[no-any-return]
        key = (_font_key(prop), self.dpi, s, _HINTING())
        kept = _extents.get(key)
        if kept is None:
            kept = _AGG.get_text_width_height_descent(self, s, prop, ismath)
            _remember(_extents, key, kept)
        return kept

    def draw_text(
        self,
        gc: Any,
        x: float,
        y: float,
        s: str,
        prop: Any,
        angle: float,
        ismath: Any = False,
        mtext: Any = None,
    ) -> None:
        if ismath or not _GLYPHS:
            _AGG.draw_text(self, gc, x, y, s, prop, angle, ismath, mtext)
            return
        flags = _HINTING()
        features = mtext.get_fontfeatures() if mtext is not None else None
        language = mtext.get_language() if mtext is not None else None
        key = (_font_key(prop), self.dpi, s, flags, _hashable(features), _hashable(language))
        laid = _layouts.get(key)
        if laid is None:
            font = _AGG._prepare_font(self, prop)  # its size set, as the layout reads it
            items = font._layout(s, flags=flags, features=features, language=language)
            laid = tuple((i.ft_object, i.glyph_index, i.x, i.y) for i in items)
            _remember(_layouts, key, laid)
        self._glyphs(gc, x, y, angle, prop.get_size_in_points(), laid, flags)

    def _glyphs(
        self, gc: Any, x: float, y: float, angle: float, size: float, laid: _Laid, flags: int
    ) -> None:
        """Each glyph of *laid* with its origin where matplotlib's Agg text puts it (the
        string's origin at *x*, *y* from the top, turned by *angle*), its bitmap from the
        cache or rendered once."""
        cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        matrix = (round(0x10000 * cos), round(-0x10000 * sin),
                  round(0x10000 * sin), round(0x10000 * cos))  # fmt: skip
        antialiased = bool(gc.get_antialiased())
        height = self.height
        for font, glyph, dx, dy in laid:
            tx = round(0x40 * (x + dx * cos - dy * sin))
            ty = round(0x40 * (height - y + dx * sin + dy * cos))
            key = (id(font), size, self.dpi, glyph, matrix, tx & 63, ty & 63, antialiased, flags)
            bitmap = _bitmaps.get(key)
            if bitmap is None or bitmap[0] is not font:
                bitmap = self._render(
                    font, size, glyph, matrix, tx & 63, ty & 63, antialiased, flags
                )
                _remember(_bitmaps, key, bitmap)
            _, buffer, left, top = bitmap
            self._renderer.draw_text_image(
                buffer, left + (tx >> 6), int(height) - (top + (ty >> 6)) + buffer.shape[0], 0, gc
            )

    def _render(
        self,
        font: Any,
        size: float,
        glyph: int,
        matrix: tuple[int, int, int, int],
        fx: int,
        fy: int,
        antialiased: bool,
        flags: int,
    ) -> _Bitmap:
        """*glyph*'s bitmap with its origin at (*fx*, *fy*) 64ths of a pixel, as FreeType
        renders it for Agg (``0xff`` coverage when not antialiased)."""
        import numpy as np

        mode = _MODES.NORMAL if antialiased else _MODES.MONO
        font.set_size(size, self.dpi)
        font._set_transform(np.array(matrix, dtype=int).reshape(2, 2), [fx, fy])
        rendered = font._render_glyph(glyph, flags, mode)
        buffer = rendered.buffer
        if not antialiased:
            buffer = buffer * 0xFF
        # the bitmap's own copy: FreeType's buffer is the font's, reused by its next glyph
        return font, np.array(buffer, copy=True), rendered.left, rendered.top


def _height_metrics(prop: Any, dpi: float) -> tuple[float, float, float] | tuple[None, None, None]:
    from matplotlib.font_manager import fontManager, get_font

    font: Any = get_font(fontManager._find_fonts_by_props(prop))
    for table, gap, ascent, descent in (
        ("OS/2", "sTypoLineGap", "sTypoAscender", "sTypoDescender"),
        ("hhea", "lineGap", "ascent", "descent"),
    ):
        metrics = font.get_sfnt_table(table)
        if metrics is None:
            continue
        head = font.get_sfnt_table("head")
        # the same float operations as Text's, in its order (the same bits)
        scale = 1 / head["unitsPerEm"] * prop.get_size_in_points() * dpi / 72
        return metrics[ascent] * scale, -metrics[descent] * scale, metrics[gap] * scale
    return None, None, None


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(value)
    return value


_AGG_TEXT: Any = _Renderer  # its constructor, untyped as RendererAgg's


class _Canvas(FigureCanvasAgg):
    """FigureCanvasAgg's renderer, reused while the size and dpi stay, as :class:`_Renderer`."""

    def get_renderer(self) -> RendererAgg:
        w, h = self.get_width_height(physical=True)
        key = (w, h, self.figure.dpi)
        if self._lastKey != key:
            _fresh()
            self.renderer = _AGG_TEXT(w, h, self.figure.dpi)
            self._lastKey = key
        renderer: RendererAgg = self.renderer
        return renderer


def canvas(fig: Figure) -> FigureCanvasAgg:
    """*fig* on an Agg canvas whose text comes from the process's caches."""
    _fresh()
    return _Canvas(fig)
