"""The paper's figures, listed once for ``ladder report`` (pure: Figure objects and data).

:data:`FIGURES` is every figure (:class:`PaperFigure`: its key, its caption, how it is
drawn from the cells present and the corruption replay's lines, None when they are absent,
and how its points are computed without drawing), drawn by :mod:`scoring.report.figures`;
:func:`paper_figures` draws those whose cells are present, in this order;
:func:`paper_points` gives their points without matplotlib (``ladder report`` without
``--figures``). A new figure: docs/extending.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.registry import Registry
from scoring.analyses.corruption_replay import CorruptionLine
from scoring.report.channel_panels import figure5a
from scoring.report.figure_data import PER_EPISODES, FigureData
from scoring.report.figure_points import channel_points, figure4_points, omission_rows, rung_points
from scoring.report.figures import Drawn, figure4, figure5b, rungs_figure
from scoring.results.lines import CellLine, ResultLine

if TYPE_CHECKING:
    from matplotlib.figure import Figure  # matplotlib (the plots extra) loads on first draw

__all__ = ["FIGURES", "Draw", "PaperFigure", "Points", "paper_figures", "paper_points"]

# How a figure is drawn from the cell lines present and the corruption replay's lines.
Draw = Callable[[Sequence[CellLine], Sequence[CorruptionLine]], Drawn | None]
# Its points from the same, without drawing (the data ``draw`` returns; None when absent).
Points = Callable[[Sequence[CellLine], Sequence[CorruptionLine]], FigureData | None]


@dataclass(frozen=True)
class PaperFigure:
    """One figure of the paper."""

    name: str  # the report's ``<stem>-<name>.png`` and its key in ``-figures.json``
    caption: str
    draw: Draw
    # the points without matplotlib: ``report-figures.json`` of a report drawn without
    # ``--figures`` has this figure's key only with it
    points: Points | None = None


_FIGURE1 = (
    "Figure 1: strict success by rung across the capability points (amended brief, S = 15 dense)"
)
_FIGURE6 = "Figure 6: the original-brief ladder at S = 15 dense under both regimes"

# The paper's figures, in the report's order (and the JSON's); another package adds one
# through the ``state_ladder.figures`` entry points (docs/extending.md).
FIGURES: Registry[PaperFigure] = Registry(
    "figure", lambda o: isinstance(o, PaperFigure), group="state_ladder.figures"
)
for _figure in (
    PaperFigure(
        name="figure1",
        caption=_FIGURE1,
        draw=lambda cells, corruption: rungs_figure(cells, "amended", _FIGURE1),
        points=lambda cells, corruption: rung_points(cells, "amended"),
    ),
    PaperFigure(
        name="figure6",
        caption=_FIGURE6,
        draw=lambda cells, corruption: rungs_figure(cells, "original", _FIGURE6),
        points=lambda cells, corruption: rung_points(cells, "original"),
    ),
    PaperFigure(
        name="figure4",
        caption="Figure 4: the graph-size axis, the model axis and the corrupted-state ablation "
        "(panels drawn from the cells present)",
        draw=lambda cells, corruption: figure4(cells),
        points=lambda cells, corruption: figure4_points(cells),
    ),
    PaperFigure(
        name="figure5a",
        caption="Figure 5(a): the channel decomposition per arm: each error channel over its "
        f"label denominator (Table 9), Wilson 95% CIs; unrequested executions per {PER_EPISODES} "
        "episodes",
        draw=lambda cells, corruption: figure5a(cells),
        points=lambda cells, corruption: channel_points(cells) or None,
    ),
    PaperFigure(
        name="figure5b",
        caption="Figure 5(b): the corruption replay, omissions attributed per epsilon",
        draw=lambda cells, corruption: figure5b(corruption) if corruption else None,
        points=lambda cells, corruption: omission_rows(corruption) if corruption else None,
    ),
):
    FIGURES.add(_figure.name, _figure)


def paper_figures(
    lines: Sequence[ResultLine],
    corruption: Sequence[CorruptionLine] = (),
    figures: Sequence[PaperFigure] | None = None,
) -> dict[str, tuple[str, Figure, FigureData]]:
    """``name -> (caption, Figure, data)`` for every figure whose cells are present."""
    cells = [x for x in lines if isinstance(x, CellLine)]
    out: dict[str, tuple[str, Figure, FigureData]] = {}
    for f in FIGURES.entries() if figures is None else figures:
        drawn = f.draw(cells, corruption)
        if drawn is not None:
            out[f.name] = (f.caption, *drawn)
    return out


def paper_points(
    lines: Sequence[ResultLine], corruption: Sequence[CorruptionLine] = ()
) -> dict[str, tuple[str, FigureData]]:
    """``name -> (caption, points)`` for every figure with a :attr:`PaperFigure.points` whose
    cells are present, in :func:`paper_figures`' order: the points it would draw, without
    matplotlib."""
    cells = [x for x in lines if isinstance(x, CellLine)]
    out: dict[str, tuple[str, FigureData]] = {}
    for f in FIGURES.entries():
        data = None if f.points is None else f.points(cells, corruption)
        if data is not None:
            out[f.name] = (f.caption, data)
    return out
