"""The paper's figures drawn from the cells present (pure: Figure objects and their data);
:mod:`scoring.report.paper_figures` lists them for the report.

Each figure is built only when its cells are in the lines, with points (no connecting
lines) across categorical configurations, Wilson 95% intervals, labelled axes, and the data
behind every point (:class:`Point`) so that ``ladder report`` writes it as JSON beside the
PNG. Cells with non-default knobs (variants) and non-canonical wordings are left out of the
Figure 1 / 4(a) / 4(b) / 6 panels; the corrupted-state panel takes the enforcement cells
that differ from their configuration only in ``corruption``.

* Figure 1: strict success by rung across the capability points (one series per model and
  regime, amended brief, S = 15 dense).
* Figure 4 (amended brief): (a) graph-size axis (x: S and density, one series per arm and
  model), (b) model axis (x: model and regime at S = 15 dense, one series per arm), (c) the
  corrupted-state ablation (x: epsilon, the enforcement gate, one series per model and
  graph).
* Figure 5(a) (drawn by :mod:`scoring.report.channel_panels`; its data here): the channel
  decomposition per arm (the decomposition behind Table 9, D.2):
  one panel per configuration (model, regime, brief, S, density, domain), the arms in ladder
  order on x, each error channel over its label denominator exactly as Table 9 computes it
  (:data:`scoring.results.cells.RATES`: re-execution / done, superseded / cancelled, premature /
  blocked, omission / eligible, refused redo / redo) with its Wilson 95% interval, and below
  it unrequested executions (no label, hence no rate) as a count per 128 episodes, as Table
  9's caption gives them, without an interval. A channel whose label never occurred in a cell has
  no point there.
* Figure 5(b): the corruption replay's omission attribution per epsilon (counts, stacked
  bars, one panel per configuration; from :mod:`scoring.analyses.corruption_replay`).
* Figure 6: the original-brief ladder at S = 15 dense, one series per model and regime.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import msgspec

from protocol.arms.table import arm_rank, ladder
from protocol.config import model_label
from protocol.records import CellKey, Knobs
from scoring.analyses.corruption_replay import FAILURE_KINDS, CorruptionLine
from scoring.report.figure_data import (
    PER_EPISODES,
    ChannelPoint,
    ChannelRate,
    FigureData,
    OmissionRow,
    Point,
    UnrequestedCount,
)
from scoring.report.figure_text import (
    EDGE_IN,
    PT_IN,
    fixed_labels,
    left_margin_in,
    legend_below,
    new_figure,
    size_in,
    tallest_in,
    text_width_in,
    unit_axis,
    wrap,
)
from scoring.report.intervals import interval_series
from scoring.results.cells import RATES, cell_sort_key, config_of
from scoring.results.lines import CellLine
from scoring.results.stats import wilson

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure
    from matplotlib.legend import Legend

__all__ = [
    "CHANNEL_NAMES",
    "PER_EPISODES",
    "TITLE_PT",
    "ChannelPoint",
    "ChannelRate",
    "Drawn",
    "FigureData",
    "Point",
    "UnrequestedCount",
    "canonical",
    "channel_points",
    "config_name",
    "figure4",
    "figure4_points",
    "figure5b",
    "omission_rows",
    "panel_title",
    "rung_points",
    "rungs_figure",
]

DENSE = (15, 0.3)
CHANNEL_NAMES = {
    "re_execution": "re-execution / done",
    "superseded": "superseded / cancelled",
    "premature": "premature / blocked",
    "omission": "omission / eligible",
    "refused_redo": "refused redo / redo",
}


TITLE_PT = 8

# Figure 5(a)'s intervals, one per distinct (errors, labels): a run's channels repeat a few
# counts (most are 0 of a cell's n) and each interval is an exact binomial test (#50)
_wilson = lru_cache(maxsize=4096)(wilson)


def canonical(c: CellKey) -> bool:
    return c.knobs == Knobs() and c.paraphrase_tier == 0 and c.ambiguous_rate == 0.0


def _model(c: CellKey) -> str:
    return f"{model_label(c)} ({c.regime})"


def config_name(c: CellKey) -> str:
    """A configuration's panel name (model, regime, graph, brief; domain and schedule when
    not the default)."""
    parts = [_model(c), f"S={c.steps} rho={c.density:g}", f"{c.brief} brief"]
    if c.domain != "procurement":
        parts.append(c.domain)
    if c.schedule:
        parts.append(f"schedule={c.schedule}")
    return ", ".join(parts)


def panel_title(panel: str, width_in: float) -> str:
    """A panel's name as its title: the model (and regime) on a line of its own, the rest
    of the configuration below, each wrapped to the panel's width (never cut)."""
    model, sep, rest = panel.partition("), ")
    text = f"{model})\n{rest}" if sep else panel
    return wrap(text, width_in, TITLE_PT)


def _grid(fig: Figure, n: int, ncols: int) -> list[SubFigure]:
    """``n`` subfigures of ``fig`` in rows of ``ncols``."""
    rows = -(-n // ncols)
    subs = fig.subfigures(rows, ncols, squeeze=False)
    flat = [subs[i // ncols][i % ncols] for i in range(rows * ncols)]
    return flat[:n]


def channel_points(cells: Sequence[CellLine]) -> list[ChannelPoint]:
    """Figure 5(a)'s data: per canonical cell, each channel's rate over its label (Table 9's
    denominators) with its Wilson 95% interval, and the unrequested count per 128 episodes."""
    out: list[ChannelPoint] = []
    for c in cells:
        if not canonical(c.cell) or c.n == 0:
            continue
        panel, arm = config_name(c.cell), c.cell.arm
        for ch, label in RATES:
            k, n = c.channels[ch], c.labels[label]
            if n == 0:
                continue
            lo, hi = _wilson(k, n)
            out.append(ChannelRate(panel=panel, series=ch, x=arm, y=k / n, lo=lo, hi=hi,
                                   errors=k, n=n))  # fmt: skip
        u = c.channels["unrequested"]
        out.append(UnrequestedCount(panel=panel, series="unrequested", x=arm,
                                    y=u * PER_EPISODES / c.n, count=u, episodes=c.n))  # fmt: skip
    return out


def _corruption_panels(
    corruption: Sequence[CorruptionLine],
) -> list[tuple[CellKey, list[CorruptionLine]]]:
    """Figure 5(b)'s panels: each configuration (the cell with its arm blanked and no
    corruption) and its lines by epsilon, then arm, in the report's order."""
    groups: dict[CellKey, list[CorruptionLine]] = {}
    for c in corruption:
        key = config_of(c.cell)
        key = msgspec.structs.replace(key, knobs=_uncorrupted(key.knobs))
        groups.setdefault(key, []).append(c)
    keys = sorted(groups, key=cell_sort_key)
    return [
        (key, sorted(groups[key], key=lambda c: (c.epsilon, arm_rank(c.cell.arm)))) for key in keys
    ]


def omission_rows(corruption: Sequence[CorruptionLine]) -> list[OmissionRow]:
    """Figure 5(b)'s data (no drawing): one row per bar, panel by panel."""
    return [_row(key, c) for key, mine in _corruption_panels(corruption) for c in mine]


def _row(key: CellKey, c: CorruptionLine) -> OmissionRow:
    return {"epsilon": c.epsilon, "arm": c.cell.arm, "model": _model(c.cell),
            "panel": config_name(key), "episodes": c.episodes, **c.omissions}  # fmt: skip


def figure5b(corruption: Sequence[CorruptionLine]) -> tuple[Figure, list[OmissionRow]]:
    """Stacked omission attribution per epsilon, one panel per configuration (the cell with
    its arm blanked and no corruption)."""
    panels = _corruption_panels(corruption)
    ncols = min(2, len(panels))
    panel_width = 5.2
    fig = new_figure(panel_width * ncols, 3.6 * -(-len(panels) // ncols) + 0.4, constrained=True)
    for sub, (key, mine) in zip(_grid(fig, len(panels), ncols), panels, strict=True):
        arms = {c.cell.arm for c in mine}
        ax = sub.subplots()
        bottom = [0] * len(mine)
        for j, kind in enumerate(FAILURE_KINDS):
            values = [c.omissions[kind] for c in mine]
            ax.bar(range(len(mine)), values, bottom=bottom, color=f"C{j}", width=0.6,
                   label=kind.replace("_", " "))  # fmt: skip
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        for i, c in enumerate(mine):
            ax.annotate(f"n={c.episodes}", (i, bottom[i]), ha="center", va="bottom", fontsize=6,
                        xytext=(0, 2), textcoords="offset points")  # fmt: skip
        labels = [f"{c.epsilon:g}" + (f"\n{c.cell.arm}" if len(arms) > 1 else "") for c in mine]
        ax.set_xticks(range(len(mine)), labels, fontsize=7)
        ax.set_xlim(-0.6, len(mine) - 0.4)
        ax.set_ylim(0, max(1, *bottom) * 1.15)
        ax.set_xlabel("corruption rate epsilon" + (", arm" if len(arms) > 1 else ""), fontsize=8)
        ax.set_ylabel("omissions (count)", fontsize=8)
        title = config_name(key) + ("" if len(arms) > 1 else f", {next(iter(arms))}")
        ax.set_title(panel_title(title, panel_width - 0.4), fontsize=TITLE_PT)
        ax.tick_params(labelsize=7)
        ax.grid(axis="y", alpha=0.3)
    handles, names = fig.axes[0].get_legend_handles_labels()
    legend_below(fig, handles, names, 7)
    fig.suptitle("Corruption replay: omissions by the corrupted decision", fontsize=9)
    return fig, [_row(key, c) for key, mine in panels for c in mine]


def _uncorrupted(knobs: Knobs) -> Knobs:
    return msgspec.structs.replace(knobs, corruption=0.0)


def _points(
    cells: Sequence[CellLine],
    keep: Callable[[CellKey], bool],
    x: Callable[[CellKey], str],
    series: Callable[[CellKey], str],
) -> list[Point]:
    out = []
    for c in cells:
        rate = c.rate("strict")
        if rate is None or not keep(c.cell):
            continue
        lo, hi = c.ci("strict")
        out.append(Point(series=series(c.cell), x=x(c.cell), y=rate, lo=lo, hi=hi, n=c.n))
    return out


def _draw(
    points: Sequence[Point], ax: Axes, xlabel: str, xs: Sequence[str], width_in: float
) -> _Panel:
    """Points with their intervals, series side by side at each x; tick labels and legend
    entries wrapped to the axes' *width_in* inches; the legend made, :func:`_place` puts it."""
    names = list(dict.fromkeys(p.series for p in points))
    width = 0.7 / max(1, len(names))
    for j, name in enumerate(names):
        mine = [p for p in points if p.series == name]
        interval_series(
            ax,
            [xs.index(p.x) + (j - (len(names) - 1) / 2) * width for p in mine],
            [p.y for p in mine],
            [(p.lo, p.hi) for p in mine],
            color=f"C{j}",
            capsize=3,
            label=wrap(name, width_in / 2, 6),
        )
    per = max(0.6, width_in / max(1, len(xs)) - 0.1)
    ticks = [wrap(x, per, 7) for x in xs]
    ax.set_xticks(range(len(xs)), ticks, fontsize=7)
    ax.set_xlim(-0.6, len(xs) - 0.4)
    unit_axis(ax)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel("strict success (Wilson 95% CI)", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    # the tick labels' lines at 7 pt, the label's line at 8 pt (1.2 line spacing), the
    # ticks' and the label's pads (3.5 + 3.5 + 4 pt) and a gap of 4 pt, below the axes
    lines = max((t.count("\n") + 1 for t in ticks), default=1)
    below = (7 * 1.2 * lines + 8 * 1.2 + 11 + 4) / 72
    legend = ax.legend(fontsize=6, loc="upper center", ncols=2) if names else None
    return _Panel(ax, below, legend)


@dataclass(frozen=True)
class _Panel:
    """An axes of Figures 1, 4 and 6, what it draws under it (its tick labels and x label,
    inches), its legend (to go under those)."""

    ax: Axes
    below: float
    legend: Legend | None


def _place(fig: Figure, panels: Sequence[_Panel], title_lines: int) -> None:
    """*fig*'s axes side by side in equal shares of its width, placed once (no layout
    engine: constrained layout measured every text twice, #50): each with its title of
    *title_lines* lines at 9 pt above it, its y label and tick labels on its left, its tick
    labels, x label and legend under it (the lowest sets every axes' bottom), the legend
    centred under its axes but inside the axes' share; the axis labels placed with them
    (:func:`fixed_labels`)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.transforms import ScaledTranslation

    w, h = fig.get_figwidth(), fig.get_figheight()
    sizes = [size_in(p.legend) if p.legend is not None else (0.0, 0.0) for p in panels]
    bottom = EDGE_IN + max(p.below + lh for p, (_, lh) in zip(panels, sizes, strict=True)) + 0.06
    top = EDGE_IN + (9 * 1.2 * title_lines + 6) * PT_IN + 0.04
    share = w / len(panels)
    for i, (p, (lw, _)) in enumerate(zip(panels, sizes, strict=True)):
        labels = p.ax.yaxis.get_ticklabels()
        font = FontProperties(size=labels[0].get_fontsize() if labels else 10)
        ticks = max((text_width_in(fig, t.get_text(), font) for t in labels), default=0.0)
        left = i * share + left_margin_in(8 * 1.2, ticks)
        right = (i + 1) * share - 0.15
        p.ax.set_position((left / w, bottom / h, (right - left) / w, 1 - (bottom + top) / h))
        fixed_labels(p.ax, ytick_in=ticks, xtick_in=tallest_in(p.ax.xaxis.get_ticklabels()))
        if p.legend is not None:
            low, high = i * share + EDGE_IN + lw / 2, (i + 1) * share - EDGE_IN - lw / 2
            centre = min(max((left + right) / 2, low), high)
            shift = ScaledTranslation(0, -p.below, fig.dpi_scale_trans)
            p.legend.set_bbox_to_anchor(
                ((centre - left) / (right - left), 0.0), transform=p.ax.transAxes + shift
            )


SortKey = str | float | tuple[float, ...] | tuple[int, str]


def _order(xs: Sequence[str], key: Callable[[str], SortKey]) -> list[str]:
    return sorted(dict.fromkeys(xs), key=key)


def _rung_key(x: str) -> SortKey:
    return arm_rank(x)


# A drawn figure and the data behind its points (written as JSON beside the PNG).
Drawn = tuple["Figure", FigureData]


def rung_points(cells: Sequence[CellLine], brief: str) -> list[Point] | None:
    """Figures 1 and 6's data (no drawing): the ladder's rungs at S = 15 dense under
    ``brief``, one series per model and regime; None unless two rungs are present."""
    rungs = set(ladder())
    pts = _points(
        cells,
        lambda c: canonical(c) and c.brief == brief and (c.steps, c.density) == DENSE
        and c.arm in rungs and c.domain == "procurement",
        lambda c: c.arm,
        _model,
    )  # fmt: skip
    if not (len({p.series for p in pts}) >= 1 and len({p.x for p in pts}) >= 2):
        return None
    return pts


def rungs_figure(cells: Sequence[CellLine], brief: str, caption: str) -> Drawn | None:
    """Figures 1 and 6 (:func:`rung_points` drawn), titled by ``caption`` after its
    "Figure N: "."""
    pts = rung_points(cells, brief)
    if pts is None:
        return None
    fig = new_figure(6.0, 4.0)
    ax = fig.add_subplot()
    panel = _draw(pts, ax, "rung", _order([p.x for p in pts], _rung_key), 5.6)
    title = wrap(caption.split(": ", 1)[1], 5.0, 9)
    ax.set_title(title, fontsize=9, y=1.0)  # as _draw's 0-1 axis places it
    _place(fig, [panel], title.count("\n") + 1)
    return fig, pts


# Figure 4's panel: its points, x label, x order and title
_Figure4Panel = tuple[list[Point], str, Callable[[str], SortKey], str]


def _figure4_panels(cells: Sequence[CellLine]) -> list[_Figure4Panel]:
    """Figure 4's panels whose cells are present (two x values or more)."""
    rungs = set(ladder())
    size = _points(
        cells,
        lambda c: canonical(c) and c.brief == "amended" and c.arm in rungs,
        lambda c: f"S={c.steps} rho={c.density:g}",
        lambda c: f"{c.arm}, {_model(c)}",
    )
    models = _points(
        cells,
        lambda c: canonical(c) and c.brief == "amended" and (c.steps, c.density) == DENSE
        and c.arm in rungs,
        _model,
        lambda c: c.arm,
    )  # fmt: skip
    eps = _points(
        cells,
        lambda c: c.arm == "enforce" and c.brief == "amended"
        and _uncorrupted(c.knobs) == Knobs()
        and c.paraphrase_tier == 0 and c.ambiguous_rate == 0.0,
        lambda c: f"{c.knobs.corruption:g}",
        lambda c: f"{_model(c)}, S={c.steps} rho={c.density:g}",
    )  # fmt: skip
    panels: list[_Figure4Panel] = [
        (size, "graph size", lambda x: tuple(float(v.split("=")[1]) for v in x.split()),
         "(a) graph-size axis"),
        (models, "model (regime), S = 15 dense", str, "(b) model axis"),
        (eps, "corruption rate epsilon", float, "(c) corrupted state, enforcement gate"),
    ]  # fmt: skip
    return [p for p in panels if len({x.x for x in p[0]}) >= 2]


def _figure4_data(present: Sequence[_Figure4Panel]) -> list[Point]:
    return [msgspec.structs.replace(p, panel=label) for pts, label, _, _ in present for p in pts]


def figure4_points(cells: Sequence[CellLine]) -> list[Point] | None:
    """Figure 4's data (no drawing): each present panel's points, named by its x label;
    None without a panel."""
    present = _figure4_panels(cells)
    return _figure4_data(present) if present else None


def figure4(cells: Sequence[CellLine]) -> Drawn | None:
    """Figure 4's panels whose cells are present."""
    present = _figure4_panels(cells)
    if not present:
        return None
    fig = new_figure(5.0 * len(present), 4.0)
    placed: list[_Panel] = []
    for i, (pts, label, key, title) in enumerate(present):
        ax = fig.add_subplot(1, len(present), i + 1)
        placed.append(_draw(pts, ax, label, _order([p.x for p in pts], key), 4.6))
        ax.set_title(title, fontsize=9, y=1.0)  # as _draw's 0-1 axis places it
    _place(fig, placed, 1)
    return fig, _figure4_data(present)
