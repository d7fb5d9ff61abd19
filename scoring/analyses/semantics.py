"""The report sections of the rules beyond one-shot state (issue #48, ours; docs/semantics.md),
pure.

Every rule's section has one shape: per cell with the rule on, against its control (the same
cell with the rule off, on the same seeds), strict success of both with Wilson intervals, the
paired difference (discordant seeds, exact McNemar) and the errors on the rule's own turns,
in two groups (:class:`Rule`). The Holm correction over each knob's contrasts is the
variant-contrast table's (its family, ``protocol.knobs``).

Budgets (the ``budget`` knob, :mod:`protocol.stress.budget`): per budgeted cell, against its
control (the same cell with the budget off, on the same seeds): strict success of both with
their Wilson intervals, the paired difference with its discordant seeds and exact McNemar
p-value, and the errors on the stressed turns themselves (the scale the design asks an
interaction to be read on, which does not reward a lower baseline): of the budget's repeat
requests within the budget (label ``eligible``), those with an error (an omission: the
one-shot habit), and of its requests beyond the budget (label ``spent``), those executed
(the ``over_budget`` channel), each with a Wilson interval clustered by episode. The Holm
correction over the knob's contrasts is the variant-contrast table's ("Semantics: budget").

Expiry and exclusive steps (the ``expiry`` and ``exclusive`` knobs) have the same section: the
expiry's two groups are its request before the lapse (label ``done``, any error) and after it
(``lapsed``, not run: ``lapse_missed``); the exclusive knob's requests are all for a closed
alternative (label ``closed``), counted with any error and executed (``exclusive_closed``).

Each rule's compute is a :class:`~scoring.analyses.base.Fold`: a first trial of a counted
episode gives its seed and success, and with the rule on its two groups' errors, as it is read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import msgspec

from protocol.config import config_label
from protocol.records import CellKey
from scoring.analyses.base import Analysis, Fold, Pair, markdown_section
from scoring.analyses.tallies import cell_groups
from scoring.replay.episode_score import TurnScore
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import cell_sort_key
from scoring.results.stats import clustered_wilson, mcnemar_exact, wilson

__all__ = [
    "BUDGET",
    "EXCLUSIVE",
    "EXPIRY",
    "BudgetLine",
    "BudgetPart",
    "Rule",
    "budget_lines",
    "budget_parts",
    "budget_section",
    "exclusive_lines",
    "exclusive_parts",
    "exclusive_section",
    "expiry_lines",
    "expiry_parts",
    "expiry_section",
]


@dataclass(frozen=True)
class Rule:
    """A rule's turns and what counts as an error on each of its two groups of them."""

    knob: str
    kind: str  # the turn kind its requests have
    first: tuple[str, str | None]  # (label, the channel an error must have; None: any)
    second: tuple[str, str | None]


BUDGET_RULE = Rule("budget", "budget_repeat", ("eligible", None), ("spent", "over_budget"))
EXPIRY_RULE = Rule("expiry", "expiry_repeat", ("done", None), ("lapsed", "lapse_missed"))
EXCLUSIVE_RULE = Rule(
    "exclusive", "exclusive_ask", ("closed", None), ("closed", "exclusive_closed")
)


class BudgetPart(msgspec.Struct, frozen=True, kw_only=True):
    """One cell's counts from one batch (a cell with the rule on, or any cell that may be a
    control)."""

    cell: CellKey
    success: dict[int, bool]  # seed -> strict success (counted episodes; trial 0)
    # per episode, (turns with an error, turns) of the rule's first group (the budget: the
    # requests within it; the expiry: those before the lapse) and of its second group (beyond
    # the budget, executed; after the lapse, not executed)
    within: list[tuple[int, int]]
    beyond: list[tuple[int, int]]


class BudgetLine(msgspec.Struct, frozen=True, kw_only=True, tag="budget"):
    cell: CellKey
    cap: int  # the rule's dose: the budget's cap, the expiry's turns
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


def _group(turns: list[TurnScore], group: tuple[str, str | None]) -> tuple[int, int]:
    label, channel = group
    mine = [t for t in turns if t.label == label]
    failed = sum(any(channel in (None, e.channel) for e in t.errors) for t in mine)
    return failed, len(mine)


# a first trial's cell, seed and strict success, and (the rule on) its two groups' errors
_Episode = tuple[CellKey, int, bool, tuple[tuple[int, int], tuple[int, int]] | None]


def _rule_fold(rule: Rule) -> Fold[_Episode, BudgetPart]:
    def each(pair: Pair, cache: EpisodeCache) -> _Episode | None:
        record, score = pair
        if not score.counted or score.trial:
            return None
        groups = None
        if getattr(record.cell.knobs, rule.knob):
            turns = [t for t in score.primary.turns if t.kind == rule.kind]
            groups = (_group(turns, rule.first), _group(turns, rule.second))
        return record.cell, score.seed, score.primary.success, groups

    return Fold(each, _parts)


def _parts(values: list[_Episode]) -> list[BudgetPart]:
    out: list[BudgetPart] = []
    for cell, episodes in cell_groups(values).items():
        part = BudgetPart(cell=cell, success={}, within=[], beyond=[])
        for _, seed, win, groups in episodes:
            part.success[seed] = win
            if groups is not None:
                part.within.append(groups[0])
                part.beyond.append(groups[1])
        out.append(part)
    return out


def _batch_parts(fold: Fold[_Episode, BudgetPart]) -> Callable[[Sequence[Pair]], list[BudgetPart]]:
    def parts(batch: Sequence[Pair]) -> list[BudgetPart]:
        """Each cell's part of ``batch`` (first trials of counted episodes)."""
        return list(fold(batch, EpisodeCache()))

    return parts


_BUDGET, _EXPIRY = _rule_fold(BUDGET_RULE), _rule_fold(EXPIRY_RULE)
_EXCLUSIVE = _rule_fold(EXCLUSIVE_RULE)
budget_parts = _batch_parts(_BUDGET)
expiry_parts = _batch_parts(_EXPIRY)
exclusive_parts = _batch_parts(_EXCLUSIVE)


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


def _rule_lines(knob: str) -> Callable[[list[BudgetPart]], tuple[BudgetLine, ...]]:
    def lines(parts: list[BudgetPart]) -> tuple[BudgetLine, ...]:
        """One line per cell with the rule on whose control ran on some of the same seeds."""
        return _lines(parts, knob)

    return lines


def _lines(parts: list[BudgetPart], knob: str) -> tuple[BudgetLine, ...]:
    cells = _merge(parts)
    lines: list[BudgetLine] = []
    for cell in sorted(cells, key=cell_sort_key):
        if not getattr(cell.knobs, knob):
            continue
        control_key = msgspec.structs.replace(
            cell, knobs=msgspec.structs.replace(cell.knobs, **{knob: 0})
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
                cap=getattr(cell.knobs, knob),
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


budget_lines = _rule_lines("budget")
expiry_lines = _rule_lines("expiry")
exclusive_lines = _rule_lines("exclusive")


def _ci(ci: tuple[float, float]) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _rows(lines: tuple[BudgetLine, ...], knob: str) -> list[list[str]]:
    return [
        [
            x.cell.arm,
            str(x.cap),
            config_label(msgspec.structs.replace(
                x.cell, knobs=msgspec.structs.replace(x.cell.knobs, **{knob: 0}))),
            f"{x.successes}/{x.episodes} {_ci(x.success_ci)}",
            f"{x.control_successes}/{x.episodes} {_ci(x.control_ci)}",
            f"{x.only_budget} / {x.only_control} (p = {x.p_value:.3g})",
            f"{x.within_failed}/{x.within} {_ci(x.within_ci)}",
            f"{x.beyond_executed}/{x.beyond} {_ci(x.beyond_ci)}",
        ]
        for x in lines
    ]  # fmt: skip


_HEAD = ["arm", "{dose}", "configuration", "strict, {rule}", "strict, control",
         "discordant ({rule} only / control only)"]  # fmt: skip


def budget_section(lines: tuple[BudgetLine, ...]) -> list[str]:
    """The Markdown section of the budgeted cells (empty when there are none)."""
    header = [h.format(dose="cap", rule="budget") for h in _HEAD]
    header += ["runs in budget missed", "runs beyond budget made"]
    note = (
        "One step may run up to `cap` times (the brief says so); the user asks for it `cap` "
        "more times after its first run, the last beyond the budget. Strict success against "
        "the same cell with the budget off on the same seeds (exact McNemar), and the errors "
        "on the budget's own turns (Wilson 95%, clustered by episode); the Holm-corrected "
        'contrasts are the family "Semantics: budget".'
    )
    rows = _rows(lines, "budget")
    return markdown_section("Budgets (budget knob; ours, docs/semantics.md)", note, header, rows)


def expiry_section(lines: tuple[BudgetLine, ...]) -> list[str]:
    """The Markdown section of the cells with an expiring step (empty when there are none)."""
    header = [h.format(dose="turns", rule="expiry") for h in _HEAD]
    header += ["asked while valid, any error", "asked after the lapse, not run"]
    note = (
        "A run of one step stays valid for `turns` of the user's messages (the brief says "
        "so); the user asks for it once while its run is valid (a redo probe) and once after "
        "it lapsed (it must be run again). Strict success against the same cell with the "
        "expiry off on the same seeds (exact McNemar), and the errors on those two requests "
        "(Wilson 95%, clustered by episode); the Holm-corrected contrasts are the family "
        '"Semantics: expiry".'
    )
    rows = _rows(lines, "expiry")
    return markdown_section("Expiry (expiry knob; ours, docs/semantics.md)", note, header, rows)


def exclusive_section(lines: tuple[BudgetLine, ...]) -> list[str]:
    """The Markdown section of the cells with an exclusive pair (empty when there are none)."""
    header = [h.format(dose="requests", rule="exclusive") for h in _HEAD]
    header += ["closed asked, any error", "closed asked, booked"]
    note = (
        'The brief lists one planned step and an alternative as "at most one of the two"; '
        "once the step is done the user asks for the closed alternative `requests` times "
        "(each a trap). Strict success against the same cell with the pair off on the same "
        "seeds (exact McNemar), and the errors on those requests (Wilson 95%, clustered by "
        'episode); the Holm-corrected contrasts are the family "Semantics: exclusive".'
    )
    rows = _rows(lines, "exclusive")
    title = "Exclusive steps (exclusive knob; ours, docs/semantics.md)"
    return markdown_section(title, note, header, rows)


BUDGET: Analysis[BudgetPart, BudgetLine] = Analysis(
    name="budget",
    table="Semantics: budget",
    compute=_BUDGET,
    finish=budget_lines,
    markdown=budget_section,
)
EXPIRY: Analysis[BudgetPart, BudgetLine] = Analysis(
    name="expiry",
    table="Semantics: expiry",
    compute=_EXPIRY,
    finish=expiry_lines,
    markdown=expiry_section,
)
EXCLUSIVE: Analysis[BudgetPart, BudgetLine] = Analysis(
    name="exclusive",
    table="Semantics: exclusive",
    compute=_EXCLUSIVE,
    finish=exclusive_lines,
    markdown=exclusive_section,
)
