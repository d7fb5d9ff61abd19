"""The run's overview for ``ladder view``: its cells (both scorings with CIs, channels and
cost) and its contrasts, each with its configuration's label, from the result lines
(:func:`scoring.results.families.score_lines`) and the one-episode cost rows the viewer's index
keeps. Pure; typed as :mod:`scoring.display.models`.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

import msgspec

from protocol.config import config_label
from scoring.analyses.cost import CostRow
from scoring.analyses.truncation import cut_share
from scoring.display.episode_views import arm_label, pairing_key
from scoring.display.models import CellCost, CellView, ContrastView
from scoring.results.cells import config_of
from scoring.results.lines import CellLine, ContrastLine, GateActivity, ResultLine

__all__ = ["cell_cost", "cells_view", "contrasts_view", "costed_cells_view"]


def cell_cost(rows: Sequence[CostRow]) -> CellCost:
    """A cell's cost from the one-episode rows of :func:`scoring.analyses.cost.cost_rows` (one row
    per completed episode): the per-episode means are the means of the rows; the episode
    latency median is the median of the episodes' wall times."""
    if not rows:
        return CellCost(n=0)
    return CellCost(
        n=len(rows),
        prompt_tokens=statistics.fmean(r.prompt_tokens for r in rows),
        completion_tokens=statistics.fmean(r.completion_tokens for r in rows),
        total_tokens=statistics.fmean(r.total_tokens for r in rows),
        helper_tokens=statistics.fmean(r.helper_tokens for r in rows),
        agent_calls=statistics.fmean(r.agent_calls for r in rows),
        helper_calls=statistics.fmean(r.matcher_required + r.compiler_required for r in rows),
        helper_calls_cached=statistics.fmean(r.matcher_cached + r.compiler_cached for r in rows),
        episode_latency_median_s=statistics.median(r.wall_s.p50 for r in rows),
    )


def cells_view(
    lines: Sequence[ResultLine],
    costs: Mapping[str, Sequence[CostRow]],
    gates: Mapping[str, GateActivity] | None = None,
) -> list[CellView]:
    """The run's cells for the overview: each cell line of :func:`scoring.results.families.score_lines`
    with its configuration's label and its cost (:func:`cell_cost` over the cell's
    one-episode cost rows, ``costs`` keyed by slug) and, for a gate cell whose gate never
    gated, why (``gates``: each gate cell's activity by slug); ``x_raw`` is the cell's mean agent tokens
    per episode over the raw cell's of the same configuration, knobs aside (None without one);
    ``cut_over`` the roles whose share of replies cut at their token budget passes
    :data:`scoring.analyses.truncation.CUT_WARN_SHARE`."""
    cells = [x for x in lines if isinstance(x, CellLine)]
    return costed_cells_view(
        lines, {c.slug: cell_cost(costs.get(c.slug, ())) for c in cells}, gates
    )


def costed_cells_view(
    lines: Sequence[ResultLine],
    costs: Mapping[str, CellCost],
    gates: Mapping[str, GateActivity] | None = None,
) -> list[CellView]:
    """:func:`cells_view` with each cell's cost already computed (``costs`` keyed by slug;
    a cell without one costs nothing: the viewer's index, #50)."""
    cells = [x for x in lines if isinstance(x, CellLine)]
    costed = [(line, costs.get(line.slug, CellCost(n=0))) for line in cells]
    raw = {
        pairing_key(line.cell): cost.total_tokens
        for line, cost in costed
        if line.cell.arm == "raw" and cost.total_tokens
    }
    out = []
    for line, cost in costed:
        base = raw.get(pairing_key(line.cell))
        total = cost.total_tokens
        x_raw = total / base if base and total is not None else None
        out.append(
            CellView(
                slug=line.slug,
                config=config_label(line.cell),
                arm_label=arm_label(line.cell),
                line=line,
                cost=msgspec.structs.replace(cost, x_raw=x_raw),
                gate_inert=(gates or {}).get(line.slug, GateActivity()).why,
                cut_over=cut_share(line.cut),
            )
        )
    return out


def contrasts_view(
    lines: Sequence[ResultLine], inert: Sequence[CellView] = ()
) -> list[ContrastView]:
    """The contrast lines, each with its configuration's label (one run holds the same
    contrast in several configurations), each naming the arms whose gate was inert
    (``inert``: the overview's cells, their ``gate_inert`` set where so)."""
    flagged = {(config_of(c.line.cell), c.line.cell.arm) for c in inert if c.gate_inert}
    out = []
    for x in lines:
        if not isinstance(x, ContrastLine):
            continue
        arms = tuple(a for a in (x.a, x.b) if (x.config, a) in flagged)
        if arms:
            x = msgspec.structs.replace(x, gate_inert=arms)
        out.append(ContrastView(config=config_label(x.config), line=x))
    return out
