"""Each stress read on the turns it stresses (issue #46, ours; docs/scoring.md), pure.

**Per stressed turn.** Per stressed cell (a ``spoof`` variant or a user style, at a dose):
the turns the stress placed (a forged line on the turn, or a style turn), the ones the agent
erred on (any error channel of the primary scoring) with a Wilson 95% interval clustered by
seed, and beside them the control's errors on the same turns (the cell with every stress off,
same seed, the turn with the same draw key: ``TurnRecord.draw_turn``, the planned turn it
stands for; the position in logs written before it).

**Interaction per stressed turn.** Does a stress hurt one rung more than another, on a scale
that does not reward a lower baseline? Per stressed configuration and pair of arms ``a``,
``b``, over the seeds all four cells share, seed ``s``'s effect on an arm is its excess error
rate on the stressed turns, ``(errors - control's errors on the same turns) / stressed
turns``; ``d_s`` is ``a``'s minus ``b``'s. The line gives the mean of ``d_s`` (each seed one
cluster), a 95% percentile bootstrap interval over seeds and a two-sided sign-flip
permutation p-value (exact up to :data:`scoring.results.stats.EXACT_SEEDS` seeds with a nonzero difference, else
:data:`scoring.results.stats.PERMUTATIONS` seeded draws). **Holm** adjusts the p-values within each family: one
stress knob (``spoof``, ``user_style``) of one model, every dose, configuration and pair of
arms together. The tables (and the pressure's, :mod:`scoring.analyses.pressure`) read one
:class:`~scoring.analyses.base.Fold`, each counted episode's :class:`TurnOutcomes`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import msgspec

from protocol.config import config_label
from protocol.records import CellKey, TurnRecord
from protocol.user import STYLE_KINDS
from scoring.analyses.base import Analysis, Fold, Pair, markdown_section
from scoring.analyses.doses import (
    control_of,
    did_interval,
    holm_by_family,
    holm_cell,
    stress_of,
)
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import cell_sort_key
from scoring.results.stats import clustered_wilson, sign_flip_p

__all__ = [
    "STRESS_TURNS",
    "TURN_INTERACTION",
    "StressTurnLine",
    "TurnInteractionLine",
    "TurnOutcomes",
    "stress_turn_lines",
    "turn_interaction_lines",
    "turn_outcomes",
]


class TurnOutcomes(msgspec.Struct, frozen=True, kw_only=True, tag="turn_outcomes"):
    """One counted episode's turns: (draw key, stressed, erred) each (a batch's part), and
    the episode's success under each scoring (the pressure's episode scale reads them)."""

    cell: CellKey
    seed: int
    turns: tuple[tuple[str, bool, bool], ...]
    success: bool = False  # strict success (the primary scoring)
    decline_aware: bool = False  # success under the decline-aware scoring


def _stressed(t: TurnRecord) -> bool:
    return bool(t.injected) or t.kind in STYLE_KINDS


def _turn_outcomes(pair: Pair, cache: EpisodeCache) -> TurnOutcomes | None:
    """A counted episode of a turn-placed stress or of a control (no stress knob)."""
    record, score = pair
    if not score.counted:
        return None
    found = stress_of(record.cell)
    if found is not None and found[0] == "tool_failure":
        return None
    turns = tuple(
        (t.draw_turn or f"i{i}", _stressed(t), bool(s.errors))
        for i, (t, s) in enumerate(zip(record.turns, score.primary.turns, strict=False))
    )
    return TurnOutcomes(
        cell=record.cell,
        seed=record.spec.seed,
        turns=turns,
        success=score.primary.success,
        decline_aware=score.decline_aware.success,
    )


def turn_outcomes(batch: Sequence[Pair]) -> list[TurnOutcomes]:
    """Every counted episode of a turn-placed stress or of a control (no stress knob)."""
    return list(_TURNS(batch, EpisodeCache()))


_Seeds = dict[int, tuple[int, int, int]]  # seed -> (stressed turns, errors, control's errors)


def _per_seed(parts: list[TurnOutcomes]) -> dict[CellKey, _Seeds]:
    """Per stressed cell and seed: its stressed turns, its errors on them, and the control's
    errors on the same turns (seeds whose control episode is in the run)."""
    episodes = {(p.cell, p.seed): p for p in parts}
    out: dict[CellKey, _Seeds] = {}
    for p in parts:
        if stress_of(p.cell) is None:
            continue
        control = episodes.get((control_of(p.cell), p.seed))
        keys = [k for k, stressed, _ in p.turns if stressed]
        if control is None or not keys:
            continue
        erred = {k: e for k, _, e in control.turns}
        errors = sum(e for _, stressed, e in p.turns if stressed)
        out.setdefault(p.cell, {})[p.seed] = (
            len(keys),
            errors,
            sum(erred.get(k, False) for k in keys),
        )
    return out


class StressTurnLine(msgspec.Struct, frozen=True, kw_only=True, tag="stress_turns"):
    cell: CellKey  # the stressed cell
    stress: str
    dose: float
    episodes: int  # seeds with their control in the run
    turns: int  # stressed turns over them
    errors: int  # of them, turns the agent erred on
    errors_ci: tuple[float, float]  # Wilson 95%, clustered by seed
    control_errors: int  # the control's errors on the same turns


def stress_turn_lines(parts: list[TurnOutcomes]) -> tuple[StressTurnLine, ...]:
    lines = []
    for cell, seeds in sorted(_per_seed(parts).items(), key=lambda x: cell_sort_key(x[0])):
        found = stress_of(cell)
        assert found is not None
        vals = list(seeds.values())
        lines.append(
            StressTurnLine(
                cell=cell,
                stress=found[0],
                dose=found[1],
                episodes=len(vals),
                turns=sum(n for n, _, _ in vals),
                errors=sum(e for _, e, _ in vals),
                errors_ci=clustered_wilson([(e, n) for n, e, _ in vals]),
                control_errors=sum(c for _, _, c in vals),
            )
        )
    return tuple(lines)


def _rate(line: StressTurnLine, errors: int) -> str:
    return f"{errors}/{line.turns}" + (f" = {errors / line.turns:.3f}" if line.turns else "")


def stress_turn_section(lines: tuple[StressTurnLine, ...]) -> list[str]:
    rows = [
        [
            x.cell.arm,
            x.stress,
            f"{x.dose:g}",
            config_label(x.cell),
            str(x.episodes),
            f"{x.turns / x.episodes:.1f}" if x.episodes else "-",
            _rate(x, x.errors) + f" [{x.errors_ci[0]:.3f}, {x.errors_ci[1]:.3f}]",
            _rate(x, x.control_errors),
        ]
        for x in lines
    ]
    note = (
        "Each stress on the turns it stresses: the stressed turns (a forged line, or a "
        "style turn), the ones with an error (any channel; Wilson 95% clustered by seed), "
        "and the control's errors on the same turns (the cell with every stress off, same "
        "seed, the planned turn the stressed one stands for). The episode scale is in "
        "'Dose-response' above; docs/scoring.md says why interactions are read here."
    )
    header = ["arm", "stress", "dose", "configuration", "episodes", "per episode",
              "errors (stressed)", "control, same turns"]  # fmt: skip
    return markdown_section("Stress per stressed turn (ours, docs/scoring.md)", note, header, rows)


class TurnInteractionLine(msgspec.Struct, frozen=True, kw_only=True, tag="turn_interaction"):
    a: CellKey  # the first arm's stressed cell
    b_arm: str
    stress: str
    dose: float
    seeds: int  # seeds all four cells share
    effect_a: float  # mean excess error rate of a on the stressed turns
    effect_b: float
    diff: float  # effect_a - effect_b
    ci: tuple[float, float]  # percentile bootstrap over seeds
    p: float  # sign-flip permutation, two-sided
    p_holm: float  # Holm within the family
    family: str


def _effects(seeds: _Seeds) -> dict[int, float]:
    return {s: (e - c) / n for s, (n, e, c) in seeds.items()}


def _family(cell: CellKey, stress: str) -> str:
    return f"Stress interactions per turn | {stress.split('=')[0]} | {cell.model}"


def _pairs(per: dict[CellKey, _Seeds]) -> list[tuple[CellKey, CellKey]]:
    """The stressed cells of one configuration, stress and dose, by pairs of arms."""
    groups: dict[CellKey, list[CellKey]] = {}
    for cell in per:
        groups.setdefault(msgspec.structs.replace(cell, arm=""), []).append(cell)
    out = []
    for _, cells in sorted(groups.items(), key=lambda x: cell_sort_key(x[0])):
        cells.sort(key=cell_sort_key)
        out += [(a, b) for i, a in enumerate(cells) for b in cells[i + 1 :]]
    return out


def turn_interaction_lines(parts: list[TurnOutcomes]) -> tuple[TurnInteractionLine, ...]:
    per = _per_seed(parts)
    raw: list[TurnInteractionLine] = []
    for a, b in _pairs(per):
        ea, eb = _effects(per[a]), _effects(per[b])
        shared = sorted(set(ea) & set(eb))
        if not shared:
            continue
        found = stress_of(a)
        assert found is not None
        d = [ea[s] - eb[s] for s in shared]
        key = f"{a.slug()}|{b.arm}|turns"
        raw.append(
            TurnInteractionLine(
                a=a,
                b_arm=b.arm,
                stress=found[0],
                dose=found[1],
                seeds=len(shared),
                effect_a=sum(ea[s] for s in shared) / len(shared),
                effect_b=sum(eb[s] for s in shared) / len(shared),
                diff=sum(d) / len(shared),
                ci=did_interval(d, key),
                p=sign_flip_p(d, key),
                p_holm=1.0,
                family=_family(a, found[0]),
            )
        )
    return _holm(raw)


def _holm(lines: list[TurnInteractionLine]) -> tuple[TurnInteractionLine, ...]:
    adjusted = holm_by_family([x.p for x in lines], [x.family for x in lines])
    return tuple(msgspec.structs.replace(x, p_holm=a) for x, a in zip(lines, adjusted, strict=True))


def turn_interaction_section(lines: tuple[TurnInteractionLine, ...]) -> list[str]:
    sizes = Counter(x.family for x in lines)
    rows = [
        [
            x.stress,
            f"{x.dose:g}",
            config_label(x.a),
            f"{x.a.arm} - {x.b_arm}",
            str(x.seeds),
            f"{x.effect_a:+.3f}",
            f"{x.effect_b:+.3f}",
            f"{x.diff:+.3f} [{x.ci[0]:+.3f}, {x.ci[1]:+.3f}]",
            holm_cell(x.p, x.p_holm),
            f"{sizes[x.family]}",
        ]
        for x in lines
    ]
    note = (
        "The arm x stress interaction per stressed turn: each arm's excess error rate on the "
        "stressed turns over the control's on the same turns (per seed, each seed one "
        "cluster), the difference between the two arms with a 95% percentile bootstrap "
        "interval over seeds, and a two-sided sign-flip permutation p, Holm-adjusted within "
        "its family (one stress knob of one model; 'family' gives its size); * marks a Holm "
        "p below 0.05. A positive difference: the stress costs the first arm more per "
        "stressed turn."
    )
    header = ["stress", "dose", "configuration", "arms", "seeds", "effect a", "effect b",
              "difference", "p / Holm", "family"]  # fmt: skip
    return markdown_section(
        "Stress interactions per stressed turn (ours, docs/scoring.md)", note, header, rows
    )


_TURNS = Fold(_turn_outcomes, list)  # one compute: these two tables and the pressure's

STRESS_TURNS: Analysis[TurnOutcomes, StressTurnLine] = Analysis(
    name="stress_turns",
    table="Stress: per stressed turn",
    compute=_TURNS,
    finish=stress_turn_lines,
    markdown=stress_turn_section,
)
TURN_INTERACTION: Analysis[TurnOutcomes, TurnInteractionLine] = Analysis(
    name="stress_turn_interaction",
    table="Stress: interactions per stressed turn",
    compute=_TURNS,
    finish=turn_interaction_lines,
    markdown=turn_interaction_section,
)
