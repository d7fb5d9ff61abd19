"""Dose-response and interaction for the stress knobs (issue #37, ours; docs/stress.md), pure.

**Dose-response.** Per configuration and arm, per stress (``spoof`` variant, user style, tool
failure), strict success (Wilson 95%) at each dose the run holds, the control (the same cell
with every stress knob off) as dose 0. A cell at 0 or at every episode at its stress's
lowest dose is marked *saturated*: it cannot show a dose's effect.

**Interaction.** Does a stress hurt one rung more than another? Per stressed configuration
(stress and dose) and per pair of arms ``a``, ``b`` run on it and on its control, over the
seeds all four cells share (paired by seed): ``d_s = (S_a,s - C_a,s) - (S_b,s - C_b,s)``, the
stress's effect on ``a``'s strict success minus its effect on ``b``'s; the line gives the
mean difference of differences and a 95% percentile bootstrap interval over seeds
(:data:`BOOTSTRAP` resamples, a generator seeded by the line's identity, so a report is
reproducible). An interval away from 0 says the stress moves the two rungs apart.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

import msgspec

from protocol.config import DEFAULT_DOSE, config_label
from protocol.records import CellKey
from scoring.analyses.base import Analysis, Pair, markdown_section, uncached
from scoring.results.cells import cell_sort_key
from scoring.results.stats import wilson

__all__ = [
    "BOOTSTRAP",
    "DOSE_RESPONSE",
    "INTERACTION",
    "DoseLine",
    "InteractionLine",
    "Outcome",
    "control_of",
    "did_interval",
    "dose_lines",
    "interaction_lines",
    "outcomes",
    "stress_of",
]

BOOTSTRAP = 2000  # OURS: resamples of the seeds for an interaction's interval


class Outcome(msgspec.Struct, frozen=True, kw_only=True, tag="outcome"):
    """One counted episode's strict success (a batch's part)."""

    cell: CellKey
    seed: int
    success: bool


def stress_of(cell: CellKey) -> tuple[str, float] | None:
    """The cell's stress (``spoof=receipt``, ``user_style=restate``, ``tool_failure``, and
    issue #48's rules ``budget`` and ``expiry`` with their cap or turns as the dose) and its
    dose; None for a cell with no stress, or with more than one."""
    k = cell.knobs
    on = []
    if k.spoof != "none":
        on.append((f"spoof={k.spoof}", k.spoof_dose))
    if k.user_style != "cooperative":
        on.append((f"user_style={k.user_style}", k.user_dose))
    if k.tool_failure > 0:
        on.append(("tool_failure", k.tool_failure))
    # the rules beyond one-shot state (issue #48): the budget's cap, the expiry's turns
    if k.budget:
        on.append(("budget", float(k.budget)))
    if k.expiry:
        on.append(("expiry", float(k.expiry)))
    return on[0] if len(on) == 1 else None


def control_of(cell: CellKey) -> CellKey:
    """The same cell with every stress knob off."""
    knobs = msgspec.structs.replace(
        cell.knobs,
        spoof="none",
        spoof_dose=DEFAULT_DOSE,
        user_style="cooperative",
        user_dose=DEFAULT_DOSE,
        tool_failure=0.0,
        budget=0,
        expiry=0,
    )
    return msgspec.structs.replace(cell, knobs=knobs)


def outcomes(batch: Sequence[Pair]) -> list[Outcome]:
    return [
        Outcome(cell=r.cell, seed=r.spec.seed, success=s.primary.success)
        for r, s in batch
        if s.counted
    ]


class DoseLine(msgspec.Struct, frozen=True, kw_only=True, tag="dose"):
    cell: CellKey  # the control cell (every stress knob off)
    stress: str
    dose: float  # 0: the control
    episodes: int
    successes: int
    success_ci: tuple[float, float]
    saturated: bool  # at the stress's lowest positive dose: no episode, or every one, succeeds


def _by_cell(parts: Iterable[Outcome]) -> dict[CellKey, dict[int, bool]]:
    out: dict[CellKey, dict[int, bool]] = {}
    for o in parts:
        out.setdefault(o.cell, {})[o.seed] = o.success
    return out


def dose_lines(parts: list[Outcome]) -> tuple[DoseLine, ...]:
    cells = _by_cell(parts)
    curves: dict[tuple[CellKey, str], dict[float, dict[int, bool]]] = {}
    for cell, seeds in cells.items():
        if (found := stress_of(cell)) is None:
            continue
        control = control_of(cell)
        curve = curves.setdefault((control, found[0]), {})
        curve[found[1]] = seeds
        if control in cells:
            curve[0.0] = cells[control]
    lines: list[DoseLine] = []
    for (control, stress), curve in sorted(
        curves.items(), key=lambda x: (cell_sort_key(x[0][0]), x[0][1])
    ):
        lowest = min((d for d in curve if d > 0), default=0.0)
        for dose in sorted(curve):
            seeds = curve[dose]
            n, k = len(seeds), sum(seeds.values())
            lines.append(
                DoseLine(
                    cell=control,
                    stress=stress,
                    dose=dose,
                    episodes=n,
                    successes=k,
                    success_ci=wilson(k, n),
                    saturated=dose == lowest > 0 and k in (0, n),
                )
            )
    return tuple(lines)


def dose_section(lines: tuple[DoseLine, ...]) -> list[str]:
    rows = [
        [
            x.cell.arm,
            x.stress,
            config_label(x.cell),
            f"{x.dose:g}" + (" (control)" if x.dose == 0 else ""),
            f"{x.successes}/{x.episodes} [{x.success_ci[0]:.3f}, {x.success_ci[1]:.3f}]"
            + (" saturated" if x.saturated else ""),
        ]
        for x in lines
    ]
    note = (
        "Strict success (Wilson 95%) of each arm under each stress at each dose in the run "
        "(generator 5: the fraction of eligible planned turns stressed; tool_failure: the "
        "failure rate per call), dose 0 the same cell with every stress off. 'saturated': at "
        "the stress's lowest dose no episode, or every one, succeeds."
    )
    return markdown_section(
        "Dose-response (stress knobs; ours, docs/stress.md)",
        note,
        ["arm", "stress", "configuration", "dose", "strict success"],
        rows,
    )


class InteractionLine(msgspec.Struct, frozen=True, kw_only=True, tag="interaction"):
    a: CellKey  # the first arm's control cell
    b_arm: str
    stress: str
    dose: float
    seeds: int  # seeds all four cells share
    effect_a: float  # mean change of a's strict success under the stress
    effect_b: float
    did: float  # effect_a - effect_b
    ci: tuple[float, float]  # percentile bootstrap over seeds


def did_interval(d: Sequence[float], key: str, resamples: int = BOOTSTRAP) -> tuple[float, float]:
    """The 95% percentile bootstrap interval of the mean of ``d`` (paired per seed), from a
    generator seeded by ``key``."""
    import numpy as np  # on first use (keeps ``ladder`` start-up fast)

    x = np.asarray(d, dtype=float)
    if x.size == 0:
        return (float("nan"), float("nan"))
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    idx = np.random.default_rng(seed).integers(0, x.size, size=(resamples, x.size))
    means = x[idx].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return (float(low), float(high))


_Arm = tuple[CellKey, dict[int, bool], dict[int, bool]]  # control cell, stressed, control


def interaction_lines(parts: list[Outcome]) -> tuple[InteractionLine, ...]:
    cells = _by_cell(parts)
    # (control configuration less the arm, stress, dose) -> arm -> (stressed, control) seeds
    groups: dict[tuple[CellKey, str, float], dict[str, _Arm]] = {}
    for cell, seeds in cells.items():
        found = stress_of(cell)
        control = control_of(cell)
        if found is None or control not in cells:
            continue
        config = msgspec.structs.replace(control, arm="")
        groups.setdefault((config, *found), {})[cell.arm] = (control, seeds, cells[control])
    lines: list[InteractionLine] = []
    for (_, stress, dose), arms in sorted(
        groups.items(), key=lambda x: (cell_sort_key(x[0][0]), x[0][1], x[0][2])
    ):
        names = sorted(arms, key=lambda a: cell_sort_key(arms[a][0]))
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                (ca, sa, pa), (_, sb, pb) = arms[a], arms[b]
                shared = sorted(set(sa) & set(pa) & set(sb) & set(pb))
                if not shared:
                    continue
                ea = [sa[s] - pa[s] for s in shared]
                eb = [sb[s] - pb[s] for s in shared]
                d = [x - y for x, y in zip(ea, eb, strict=True)]
                key = f"{ca.slug()}|{b}|{stress}|{dose!r}"
                lines.append(
                    InteractionLine(
                        a=ca,
                        b_arm=b,
                        stress=stress,
                        dose=dose,
                        seeds=len(shared),
                        effect_a=sum(ea) / len(shared),
                        effect_b=sum(eb) / len(shared),
                        did=sum(d) / len(shared),
                        ci=did_interval(d, key),
                    )
                )
    return tuple(lines)


def interaction_section(lines: tuple[InteractionLine, ...]) -> list[str]:
    rows = [
        [
            x.stress,
            f"{x.dose:g}",
            config_label(x.a),
            f"{x.a.arm} - {x.b_arm}",
            str(x.seeds),
            f"{x.effect_a:+.3f}",
            f"{x.effect_b:+.3f}",
            f"{x.did:+.3f} [{x.ci[0]:+.3f}, {x.ci[1]:+.3f}]"
            + (" *" if x.ci[0] > 0 or x.ci[1] < 0 else ""),
        ]
        for x in lines
    ]
    note = (
        "Does a stress hurt one rung more than another? Per stressed configuration and pair "
        "of arms, over the seeds both arms ran stressed and unstressed: each arm's change in "
        "strict success under the stress, and their difference (a paired difference of "
        f"differences) with a 95% percentile bootstrap interval over seeds ({BOOTSTRAP} "
        "resamples); * marks an interval that excludes 0."
    )
    return markdown_section(
        "Stress interactions (ours, docs/stress.md)",
        note,
        [
            "stress",
            "dose",
            "configuration",
            "arms",
            "seeds",
            "effect a",
            "effect b",
            "difference",
        ],
        rows,
    )


_OUTCOMES = uncached(outcomes)  # one compute: both tables read a batch's outcomes once

DOSE_RESPONSE: Analysis[Outcome, DoseLine] = Analysis(
    name="dose_response",
    table="Stress: dose-response",
    compute=_OUTCOMES,
    finish=dose_lines,
    markdown=dose_section,
)
INTERACTION: Analysis[Outcome, InteractionLine] = Analysis(
    name="stress_interaction",
    table="Stress: interactions",
    compute=_OUTCOMES,
    finish=interaction_lines,
    markdown=interaction_section,
)
