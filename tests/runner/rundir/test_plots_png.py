"""The report's PNGs show exactly the pixels ``savefig`` draws (#50): written as RGB at a
faster zlib level when every pixel is opaque, RGBA otherwise; and the channels figure's
stacked bars, one collection per channel, are the pixels ``ax.bar`` draws."""

from __future__ import annotations

import io
from typing import Literal

import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

from runner.rundir.plots import DPI, _png
from scoring.report.markdown import _stack

Layout = Literal["constrained"] | None


def _pixels(png: bytes) -> tuple[str, np.ndarray]:
    image = Image.open(io.BytesIO(png))
    return image.mode, np.asarray(image.convert("RGBA"))


def _savefig(fig: Figure) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, dpi=DPI, format="png")
    return out.getvalue()


def _figure(facecolor: str, layout: Layout) -> Figure:
    fig = Figure(figsize=(3.0, 2.0), facecolor=facecolor, layout=layout)
    ax = fig.add_subplot()
    ax.errorbar([0, 1, 2], [0.2, 0.5, 0.9], yerr=[[0.1] * 3, [0.05] * 3], fmt="o", label="a")
    ax.set_title("a title", y=1.0)
    ax.set_xlabel("arm")
    ax.legend()
    return fig


@pytest.mark.parametrize("layout", [None, "constrained"])
def test_an_opaque_figure_is_written_as_rgb_with_savefigs_pixels(layout: Layout) -> None:
    expected = _pixels(_savefig(_figure("white", layout)))
    png = _png(_figure("white", layout))
    mode, pixels = _pixels(png)
    assert expected[0] == "RGBA" and mode == "RGB"
    assert pixels.shape == expected[1].shape and (pixels == expected[1]).all()
    info = Image.open(io.BytesIO(png)).info
    assert info["Software"].startswith("Matplotlib version")
    assert round(info["dpi"][0]) == DPI


def test_a_transparent_figure_keeps_its_alpha() -> None:
    expected = _pixels(_savefig(_figure("none", None)))
    mode, pixels = _pixels(_png(_figure("none", None)))
    assert mode == "RGBA" and (pixels[..., 3] < 255).any()
    assert (pixels == expected[1]).all()


def test_stacked_collections_draw_the_bars_pixels() -> None:
    layers = [[0.3, 0.0, 0.25, 0.5], [0.2, 0.4, 0.0, 0.1], [0.05, 0.05, 0.3, 0.0]]
    figs = []
    for collection in (False, True):
        fig = Figure(figsize=(3.0, 2.0))
        ax = fig.add_subplot()
        bottom = [0.0] * 4
        for j, values in enumerate(layers):
            if collection:
                _stack(ax, bottom, values, f"C{j}", f"layer {j}")
            else:
                ax.bar(range(4), values, bottom=bottom, label=f"layer {j}")
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        ax.set_xlim(-0.6, 3.4)
        ax.set_ylim(0, 1.0)
        handles, labels = ax.get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=3)
        figs.append(_pixels(_savefig(fig))[1])
    bars, stacked = figs
    assert (bars[..., :3] < 250).any()  # something was drawn
    assert (bars == stacked).all()
