"""The data behind the paper's figures (:mod:`scoring.report.figures` draws them), computed
without drawing: ``ladder report`` writes these points to ``<stem>-figures.json`` whether or
not it draws the figures (#50, ninth round: figures on request). Pure: no matplotlib, no I/O.
Which cells each figure takes: :mod:`scoring.report.figures`' docstring."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

import msgspec

from protocol.arms.table import arm_rank, ladder
from protocol.config import model_label
from protocol.records import CellKey, Knobs
from scoring.analyses.corruption_replay import CorruptionLine
from scoring.report.figure_data import (
    PER_EPISODES,
    ChannelPoint,
    ChannelRate,
    OmissionRow,
    Point,
    UnrequestedCount,
)
from scoring.results.cells import RATES, cell_sort_key, config_of
from scoring.results.lines import CellLine
from scoring.results.stats import wilson

__all__ = [
    "DENSE",
    "Figure4Panel",
    "SortKey",
    "canonical",
    "channel_points",
    "config_name",
    "corruption_panels",
    "figure4_data",
    "figure4_panels",
    "figure4_points",
    "model_name",
    "omission_row",
    "omission_rows",
    "rung_points",
    "strict_points",
    "uncorrupted",
]

DENSE = (15, 0.3)


# Figure 5(a)'s intervals, one per distinct (errors, labels): a run's channels repeat a few
# counts (most are 0 of a cell's n) and each interval is an exact binomial test (#50)
_wilson = lru_cache(maxsize=4096)(wilson)


def canonical(c: CellKey) -> bool:
    return c.knobs == Knobs() and c.paraphrase_tier == 0 and c.ambiguous_rate == 0.0


def model_name(c: CellKey) -> str:
    return f"{model_label(c)} ({c.regime})"


def config_name(c: CellKey) -> str:
    """A configuration's panel name (model, regime, graph, brief; domain and schedule when
    not the default)."""
    parts = [model_name(c), f"S={c.steps} rho={c.density:g}", f"{c.brief} brief"]
    if c.domain != "procurement":
        parts.append(c.domain)
    if c.schedule:
        parts.append(f"schedule={c.schedule}")
    return ", ".join(parts)


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


def corruption_panels(
    corruption: Sequence[CorruptionLine],
) -> list[tuple[CellKey, list[CorruptionLine]]]:
    """Figure 5(b)'s panels: each configuration (the cell with its arm blanked and no
    corruption) and its lines by epsilon, then arm, in the report's order."""
    groups: dict[CellKey, list[CorruptionLine]] = {}
    for c in corruption:
        key = config_of(c.cell)
        key = msgspec.structs.replace(key, knobs=uncorrupted(key.knobs))
        groups.setdefault(key, []).append(c)
    keys = sorted(groups, key=cell_sort_key)
    return [
        (key, sorted(groups[key], key=lambda c: (c.epsilon, arm_rank(c.cell.arm)))) for key in keys
    ]


def omission_rows(corruption: Sequence[CorruptionLine]) -> list[OmissionRow]:
    """Figure 5(b)'s data (no drawing): one row per bar, panel by panel."""
    return [omission_row(key, c) for key, mine in corruption_panels(corruption) for c in mine]


def omission_row(key: CellKey, c: CorruptionLine) -> OmissionRow:
    return {"epsilon": c.epsilon, "arm": c.cell.arm, "model": model_name(c.cell),
            "panel": config_name(key), "episodes": c.episodes, **c.omissions}  # fmt: skip


def uncorrupted(knobs: Knobs) -> Knobs:
    return msgspec.structs.replace(knobs, corruption=0.0)


def strict_points(
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


SortKey = str | float | tuple[float, ...] | tuple[int, str]


def rung_points(cells: Sequence[CellLine], brief: str) -> list[Point] | None:
    """Figures 1 and 6's data (no drawing): the ladder's rungs at S = 15 dense under
    ``brief``, one series per model and regime; None unless two rungs are present."""
    rungs = set(ladder())
    pts = strict_points(
        cells,
        lambda c: canonical(c) and c.brief == brief and (c.steps, c.density) == DENSE
        and c.arm in rungs and c.domain == "procurement",
        lambda c: c.arm,
        model_name,
    )  # fmt: skip
    if not (len({p.series for p in pts}) >= 1 and len({p.x for p in pts}) >= 2):
        return None
    return pts


# Figure 4's panel: its points, x label, x order and title
Figure4Panel = tuple[list[Point], str, Callable[[str], SortKey], str]


def figure4_panels(cells: Sequence[CellLine]) -> list[Figure4Panel]:
    """Figure 4's panels whose cells are present (two x values or more)."""
    rungs = set(ladder())
    size = strict_points(
        cells,
        lambda c: canonical(c) and c.brief == "amended" and c.arm in rungs,
        lambda c: f"S={c.steps} rho={c.density:g}",
        lambda c: f"{c.arm}, {model_name(c)}",
    )
    models = strict_points(
        cells,
        lambda c: canonical(c) and c.brief == "amended" and (c.steps, c.density) == DENSE
        and c.arm in rungs,
        model_name,
        lambda c: c.arm,
    )  # fmt: skip
    eps = strict_points(
        cells,
        lambda c: c.arm == "enforce" and c.brief == "amended"
        and uncorrupted(c.knobs) == Knobs()
        and c.paraphrase_tier == 0 and c.ambiguous_rate == 0.0,
        lambda c: f"{c.knobs.corruption:g}",
        lambda c: f"{model_name(c)}, S={c.steps} rho={c.density:g}",
    )  # fmt: skip
    panels: list[Figure4Panel] = [
        (size, "graph size", lambda x: tuple(float(v.split("=")[1]) for v in x.split()),
         "(a) graph-size axis"),
        (models, "model (regime), S = 15 dense", str, "(b) model axis"),
        (eps, "corruption rate epsilon", float, "(c) corrupted state, enforcement gate"),
    ]  # fmt: skip
    return [p for p in panels if len({x.x for x in p[0]}) >= 2]


def figure4_data(present: Sequence[Figure4Panel]) -> list[Point]:
    return [msgspec.structs.replace(p, panel=label) for pts, label, _, _ in present for p in pts]


def figure4_points(cells: Sequence[CellLine]) -> list[Point] | None:
    """Figure 4's data (no drawing): each present panel's points, named by its x label;
    None without a panel."""
    present = figure4_panels(cells)
    return figure4_data(present) if present else None
