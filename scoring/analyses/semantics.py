"""The report section of the rules beyond one-shot state (issue #48, ours; docs/semantics.md),
pure.

Budgets (the ``budget`` knob, :mod:`protocol.stress.budget`): per budgeted cell, against its
control (the same cell with the budget off, on the same seeds): strict success of both with
their Wilson intervals, the paired difference with its discordant seeds and exact McNemar
p-value, and the errors on the stressed turns themselves (the scale the design asks an
interaction to be read on, which does not reward a lower baseline): of the budget's repeat
requests within the budget (label ``eligible``), those with an error (an omission: the
one-shot habit), and of its requests beyond the budget (label ``spent``), those executed
(the ``over_budget`` channel), each with a Wilson interval clustered by episode. The Holm
correction over the knob's contrasts is the variant-contrast table's ("Semantics: budget").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from protocol.config import config_label
from protocol.records import CellKey
from scoring.analyses.base import Analysis, Pair, markdown_section, uncached
from scoring.results.cells import cell_sort_key
from scoring.results.stats import clustered_wilson, mcnemar_exact, wilson

__all__ = ["BUDGET", "BudgetLine", "BudgetPart", "budget_lines", "budget_parts", "budget_section"]


class BudgetPart(msgspec.Struct, frozen=True, kw_only=True):
    """One cell's counts from one batch (a budgeted cell or any cell that may be a control)."""

    cell: CellKey
    success: dict[int, bool]  # seed -> strict success (counted episodes; trial 0)
    within: list[tuple[int, int]]  # per episode: (repeat requests in budget with an error, all)
    beyond: list[tuple[int, int]]  # per episode: (requests beyond the budget executed, all)


class BudgetLine(msgspec.Struct, frozen=True, kw_only=True, tag="budget"):
    cell: CellKey
    cap: int
    episodes: int  # seeds counted in both the cell and its control
    successes: int
    success_ci: tuple[float, float]
    control_successes: int
    control_ci: tuple[float, float]
    only_control: int  # seeds the control passed and the budgeted cell failed
    only_budget: int  # seeds the budgeted cell passed and the control failed
    p_value: float  # exact McNemar on the discordant seeds
    within_failed: int
    within: int
    within_ci: tuple[float, float]
    beyond_executed: int
    beyond: int
    beyond_ci: tuple[float, float]


def budget_parts(batch: Sequence[Pair]) -> list[BudgetPart]:
    """Each cell's part of ``batch`` (first trials of counted episodes)."""
    acc: dict[CellKey, tuple[dict[int, bool], list[tuple[int, int]], list[tuple[int, int]]]] = {}
    for record, score in batch:
        if not score.counted or score.trial:
            continue
        success, within, beyond = acc.setdefault(record.cell, ({}, [], []))
        success[score.seed] = score.primary.success
        if not record.cell.knobs.budget:
            continue
        turns = [t for t in score.primary.turns if t.kind == "budget_repeat"]
        ok = [t for t in turns if t.label == "eligible"]
        over = [t for t in turns if t.label == "spent"]
        within.append((sum(bool(t.errors) for t in ok), len(ok)))
        ran = sum(any(e.channel == "over_budget" for e in t.errors) for t in over)
        beyond.append((ran, len(over)))
    return [BudgetPart(cell=c, success=s, within=w, beyond=b) for c, (s, w, b) in acc.items()]


def _merge(parts: Iterable[BudgetPart]) -> dict[CellKey, BudgetPart]:
    out: dict[CellKey, BudgetPart] = {}
    for p in parts:
        have = out.get(p.cell)
        out[p.cell] = (
            p
            if have is None
            else BudgetPart(
                cell=p.cell,
                success={**have.success, **p.success},
                within=[*have.within, *p.within],
                beyond=[*have.beyond, *p.beyond],
            )
        )
    return out


def _ratio_ci(clusters: list[tuple[int, int]]) -> tuple[int, int, tuple[float, float]]:
    k, n = sum(c[0] for c in clusters), sum(c[1] for c in clusters)
    return k, n, clustered_wilson([c for c in clusters if c[1]]) if n else (0.0, 1.0)


def budget_lines(parts: list[BudgetPart]) -> tuple[BudgetLine, ...]:
    """One line per budgeted cell whose control ran on some of the same seeds."""
    cells = _merge(parts)
    lines: list[BudgetLine] = []
    for cell in sorted(cells, key=cell_sort_key):
        if not cell.knobs.budget:
            continue
        control_key = msgspec.structs.replace(
            cell, knobs=msgspec.structs.replace(cell.knobs, budget=0)
        )
        control = cells.get(control_key)
        if control is None:
            continue
        part = cells[cell]
        seeds = sorted(set(part.success) & set(control.success))
        if not seeds:
            continue
        k = sum(part.success[s] for s in seeds)
        c = sum(control.success[s] for s in seeds)
        b = sum(control.success[s] and not part.success[s] for s in seeds)
        a = sum(part.success[s] and not control.success[s] for s in seeds)
        wk, wn, wci = _ratio_ci(part.within)
        bk, bn, bci = _ratio_ci(part.beyond)
        lines.append(
            BudgetLine(
                cell=cell,
                cap=cell.knobs.budget,
                episodes=len(seeds),
                successes=k,
                success_ci=wilson(k, len(seeds)),
                control_successes=c,
                control_ci=wilson(c, len(seeds)),
                only_control=b,
                only_budget=a,
                p_value=mcnemar_exact(b, a),
                within_failed=wk,
                within=wn,
                within_ci=wci,
                beyond_executed=bk,
                beyond=bn,
                beyond_ci=bci,
            )
        )
    return tuple(lines)


def _ci(ci: tuple[float, float]) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def budget_section(lines: tuple[BudgetLine, ...]) -> list[str]:
    """The Markdown section of the budgeted cells (empty when there are none)."""
    rows = [
        [
            x.cell.arm,
            str(x.cap),
            config_label(msgspec.structs.replace(
                x.cell, knobs=msgspec.structs.replace(x.cell.knobs, budget=0))),
            f"{x.successes}/{x.episodes} {_ci(x.success_ci)}",
            f"{x.control_successes}/{x.episodes} {_ci(x.control_ci)}",
            f"{x.only_budget} / {x.only_control} (p = {x.p_value:.3g})",
            f"{x.within_failed}/{x.within} {_ci(x.within_ci)}",
            f"{x.beyond_executed}/{x.beyond} {_ci(x.beyond_ci)}",
        ]
        for x in lines
    ]  # fmt: skip
    header = [
        "arm",
        "cap",
        "configuration",
        "strict, budget",
        "strict, control",
        "discordant (budget only / control only)",
        "runs in budget missed",
        "runs beyond budget made",
    ]
    note = (
        "One step may run up to `cap` times (the brief says so); the user asks for it `cap` "
        "more times after its first run, the last beyond the budget. Strict success against "
        "the same cell with the budget off on the same seeds (exact McNemar), and the errors "
        "on the budget's own turns (Wilson 95%, clustered by episode); the Holm-corrected "
        'contrasts are the family "Semantics: budget".'
    )
    return markdown_section("Budgets (budget knob; ours, docs/semantics.md)", note, header, rows)


BUDGET: Analysis[BudgetPart, BudgetLine] = Analysis(
    name="budget",
    table="Semantics: budget",
    compute=uncached(budget_parts),
    finish=budget_lines,
    markdown=budget_section,
)
