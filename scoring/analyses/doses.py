"""Dose-response and interaction for the stress knobs (issue #37, ours; docs/stress.md), pure.

**Dose-response.** Per configuration and arm, per stress (``spoof`` variant, user style, tool
failure), strict success (Wilson 95%) at each dose the run holds, the control (the same cell
with every stress knob off) as dose 0. A line where every episode succeeds is marked
*ceiling* and one where none does *floor* (issue #46; "saturated" named both before): at a
ceiling the control leaves a stress nothing to gain, at a floor nothing to lose, so
neither can show a dose's effect on this scale (the per-stressed-turn table,
:mod:`scoring.analyses.stress_turns`, can).

**Interaction.** Does a stress hurt one rung more than another? Per stressed configuration
(stress and dose) and per pair of arms ``a``, ``b`` run on it and on its control, over the
seeds all four cells share (paired by seed): ``d_s = (S_a,s - C_a,s) - (S_b,s - C_b,s)``, the
stress's effect on ``a``'s strict success minus its effect on ``b``'s; the line gives the
mean difference of differences and a 95% percentile bootstrap interval over seeds
(:data:`BOOTSTRAP` resamples, a generator seeded by the line's identity, so a report is
reproducible), a two-sided sign-flip permutation p over seeds, and that p Holm-adjusted
within its family (one stress knob of one model: every dose, configuration and pair of
arms; #46). A star needs the Holm p below 0.05. This episode scale rewards the rung with the
lower baseline (docs/scoring.md); :mod:`scoring.analyses.stress_turns` reads the same
question per stressed turn. Both read one :class:`~scoring.analyses.base.Fold`, each counted
episode's :class:`Outcome`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

import msgspec

from protocol.config import DEFAULT_DOSE, config_label
from protocol.records import CellKey, EpisodeRecord
from scoring.analyses.base import Analysis, Fold, Pair, markdown_section
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import cell_sort_key
from scoring.results.stats import containing, holm, sign_flip_p, wilson

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
    "holm_by_family",
    "interaction_lines",
    "outcomes",
    "stress_of",
    "stressed_turns",
]

BOOTSTRAP = 2000  # OURS: resamples of the seeds for an interaction's interval


class Outcome(msgspec.Struct, frozen=True, kw_only=True, tag="outcome"):
    """One counted episode's strict success (a batch's part) and its stressed turns."""

    cell: CellKey
    seed: int
    success: bool
    stressed: int = 0  # the episode's stressed turns (:func:`stressed_turns`; issue #46)


def stressed_turns(record: EpisodeRecord) -> int:
    """The turns a stress took in ``record``: a forged or restated turn, a double order, a
    ``contradict`` pair (one: the claim and its retraction are one stress slot), a turn with
    a failed tool call, a turn a session restart opened (issue #48)."""
    return sum(
        bool(t.injected)
        or t.kind in ("restate", "double", "keep_claim")
        or any(c.outcome == "failed" for c in t.tool_calls)
        or isinstance(t.session, int)  # a restart before the turn (the sessions knob, #48)
        for t in record.turns
    )


def stress_of(cell: CellKey) -> tuple[str, float] | None:
    """The cell's stress (``spoof=receipt``, ``user_style=restate``, ``tool_failure``, and
    issue #48's rules ``budget``, ``expiry`` and ``exclusive`` with their cap, turns or
    requests as the dose) and its dose; None for a cell with no stress, or with more than
    one."""
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
    if k.sessions:  # several sessions (#48): K the dose, each handoff (and agent) a stress
        nxt = f" next_model={k.next_model}" if k.next_model else ""
        on.append((f"sessions handoff={k.handoff}{nxt}", float(k.sessions)))
    if k.exclusive:
        on.append(("exclusive", float(k.exclusive)))
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
        sessions=0,
        handoff="none",
        next_model="",
        exclusive=0,
    )
    return msgspec.structs.replace(cell, knobs=knobs)


def _outcome(pair: Pair, cache: EpisodeCache) -> Outcome | None:
    r, s = pair
    if not s.counted:
        return None
    return Outcome(cell=r.cell, seed=r.spec.seed, success=s.primary.success,
                   stressed=stressed_turns(r))  # fmt: skip


def outcomes(batch: Sequence[Pair]) -> list[Outcome]:
    return list(_OUTCOMES(batch, EpisodeCache()))


class DoseLine(msgspec.Struct, frozen=True, kw_only=True, tag="dose"):
    cell: CellKey  # the control cell (every stress knob off)
    stress: str
    dose: float  # 0: the control
    episodes: int
    successes: int
    success_ci: tuple[float, float]
    # "ceiling": every episode succeeds; "floor": none does; "" otherwise (#46)
    bound: str = ""
    # stressed turns per episode (issue #46): the mean and the fewest and most of one episode
    stressed_mean: float = 0.0
    stressed_range: tuple[int, int] = (0, 0)


def _by_cell(parts: Iterable[Outcome]) -> dict[CellKey, dict[int, bool]]:
    out: dict[CellKey, dict[int, bool]] = {}
    for o in parts:
        out.setdefault(o.cell, {})[o.seed] = o.success
    return out


def _stressed(parts: Iterable[Outcome]) -> dict[CellKey, list[int]]:
    out: dict[CellKey, list[int]] = {}
    for o in parts:
        out.setdefault(o.cell, []).append(o.stressed)
    return out


def _bound(successes: int, episodes: int) -> str:
    """ "ceiling" when every episode succeeds, "floor" when none does, else ""."""
    if episodes and successes == episodes:
        return "ceiling"
    return "floor" if episodes and successes == 0 else ""


def dose_lines(parts: list[Outcome]) -> tuple[DoseLine, ...]:
    cells = _by_cell(parts)
    stressed = _stressed(parts)
    curves: dict[tuple[CellKey, str], dict[float, dict[int, bool]]] = {}
    counts: dict[tuple[CellKey, str, float], list[int]] = {}
    for cell, seeds in cells.items():
        if (found := stress_of(cell)) is None:
            continue
        control = control_of(cell)
        curve = curves.setdefault((control, found[0]), {})
        curve[found[1]] = seeds
        counts[(control, found[0], found[1])] = stressed[cell]
        if control in cells:
            curve[0.0] = cells[control]
    lines: list[DoseLine] = []
    for (control, stress), curve in sorted(
        curves.items(), key=lambda x: (cell_sort_key(x[0][0]), x[0][1])
    ):
        for dose in sorted(curve):
            seeds = curve[dose]
            n, k = len(seeds), sum(seeds.values())
            per = counts.get((control, stress, dose), [0])
            lines.append(
                DoseLine(
                    cell=control,
                    stress=stress,
                    dose=dose,
                    episodes=n,
                    successes=k,
                    success_ci=wilson(k, n),
                    bound=_bound(k, n),
                    stressed_mean=sum(per) / len(per),
                    stressed_range=(min(per), max(per)),
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
            "-"
            if x.dose == 0
            else f"{x.stressed_mean:.2f} ({x.stressed_range[0]}-{x.stressed_range[1]})",
            f"{x.successes}/{x.episodes} [{x.success_ci[0]:.3f}, {x.success_ci[1]:.3f}]"
            + (f" {x.bound}" if x.bound else ""),
        ]
        for x in lines
    ]
    note = (
        "Strict success (Wilson 95%) of each arm under each stress at each dose in the run "
        "(generator 6: a share of 8 stress slots, the same for every stress, capped by the "
        "eligible turns; generator 5: the fraction of eligible planned turns stressed; "
        "tool_failure: the failure rate per try), dose 0 the same cell with every stress off. "
        "'stressed turns/ep': per episode, the mean (fewest-most) of the turns the stress "
        "took (a contradict pair counts once; tool_failure: turns with a failed call). "
        "'ceiling': every episode succeeds (the stress has nothing to gain); 'floor': none "
        "does (nothing to lose); neither shows an effect on this scale (see the "
        "per-stressed-turn table)."
    )
    return markdown_section(
        "Dose-response (stress knobs; ours, docs/stress.md)",
        note,
        ["arm", "stress", "configuration", "dose", "stressed turns/ep", "strict success"],
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
    p: float = 1.0  # sign-flip permutation over seeds, two-sided (#46)
    p_holm: float = 1.0  # Holm within the family
    family: str = ""  # "Stress interactions | <knob> | <model>"


def did_interval(d: Sequence[float], key: str, resamples: int = BOOTSTRAP) -> tuple[float, float]:
    """The 95% percentile bootstrap interval of the mean of ``d`` (paired per seed), from a
    generator seeded by ``key``, widened to hold the mean itself (a percentile interval need
    not, and the report's error bars refuse one that does not)."""
    import numpy as np  # on first use (keeps ``ladder`` start-up fast)

    x = np.asarray(d, dtype=float)
    if x.size == 0:
        return (float("nan"), float("nan"))
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    idx = np.random.default_rng(seed).integers(0, x.size, size=(resamples, x.size))
    means = x[idx].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return containing(float(x.mean()), float(low), float(high))


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
                        p=sign_flip_p(d, key),
                        family=f"Stress interactions | {stress.split('=')[0]} | {ca.model}",
                    )
                )
    return _holm(lines)


def holm_cell(p: float, p_holm: float) -> str:
    """A line's "p / Holm" column: both p-values, * where the Holm p is below 0.05."""
    return f"{p:.3g} / {p_holm:.3g}" + (" *" if p_holm < 0.05 else "")


def holm_by_family(ps: Sequence[float], families: Sequence[str]) -> list[float]:
    """Each p Holm-adjusted within its family (the lines of one family together), in the
    order given."""
    out = list(ps)
    members: dict[str, list[int]] = {}
    for i, f in enumerate(families):
        members.setdefault(f, []).append(i)
    for idx in members.values():
        for i, adj in zip(idx, holm([ps[i] for i in idx]), strict=True):
            out[i] = adj
    return out


def _holm(lines: list[InteractionLine]) -> tuple[InteractionLine, ...]:
    adjusted = holm_by_family([x.p for x in lines], [x.family for x in lines])
    return tuple(msgspec.structs.replace(x, p_holm=a) for x, a in zip(lines, adjusted, strict=True))


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
            f"{x.did:+.3f} [{x.ci[0]:+.3f}, {x.ci[1]:+.3f}]",
            holm_cell(x.p, x.p_holm),
        ]
        for x in lines
    ]
    note = (
        "Does a stress hurt one rung more than another? Per stressed configuration and pair "
        "of arms, over the seeds both arms ran stressed and unstressed: each arm's change in "
        "strict success under the stress, and their difference (a paired difference of "
        f"differences) with a 95% percentile bootstrap interval over seeds ({BOOTSTRAP} "
        "resamples) and a sign-flip permutation p, Holm-adjusted within one stress knob of "
        "one model; * marks a Holm p below 0.05. This scale rewards the arm with the lower "
        "baseline: read the interaction per stressed turn (below; docs/scoring.md)."
    )
    header = ["stress", "dose", "configuration", "arms", "seeds", "effect a", "effect b",
              "difference", "p / Holm"]  # fmt: skip
    return markdown_section("Stress interactions (ours, docs/stress.md)", note, header, rows)


_OUTCOMES = Fold(_outcome, list)  # one compute: both tables read a batch's outcomes once

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
