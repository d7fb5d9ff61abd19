"""A user style's pressure over its plain control in the same slot (issue #46, ours), pure.

``restate`` and ``restate_plain``, ``double`` and ``double_plain`` (:data:`protocol.config.
PLAIN_CONTROLS`; docs/stress.md, "Controls in the same slot") stress the same turns with the
same steps and work orders at every dose; only the wording differs. So the style's *pressure*
(a follow-up on an earlier message, "please do both") is the styled cell minus its plain
control, read where the two differ: on the stressed turns, paired by (seed, turn).

Per styled cell (a style with a plain control, at a dose) and its plain cell (the same cell,
``user_style`` its plain control), over the seeds both ran: seed ``s`` gives its stressed
turns ``n`` (the style turns of the styled episode that the plain episode also stressed, by
draw key: ``TurnRecord.draw_turn``), the styled episode's errors ``e`` on them (any error
channel of the primary scoring) and the plain episode's errors ``c`` on the same turns;
the seed's pressure is ``(e - c) / n``. The line gives the mean over seeds (each seed one
cluster, as :mod:`scoring.analyses.stress_turns` reads an interaction), a 95% percentile
bootstrap interval over seeds and a two-sided sign-flip permutation p. **Holm** adjusts the
p-values within the family ``Stress pressure | <model>``: one question (does the wording
cost beyond the request it carries?) asked of one model, every style, dose, configuration
and arm together; a family apart from the interactions, so their Holm p-values stay as they
were (docs/scoring.md).
"""

from __future__ import annotations

from collections import Counter

import msgspec

from protocol.config import PLAIN_CONTROLS, config_label
from protocol.records import CellKey
from scoring.analyses.base import Analysis, markdown_section
from scoring.analyses.doses import did_interval, holm_by_family, holm_cell
from scoring.analyses.stress_turns import STRESS_TURNS, TurnOutcomes
from scoring.results.cells import cell_sort_key
from scoring.results.stats import sign_flip_p

__all__ = [
    "PRESSURE",
    "PressureLine",
    "paired_cells",
    "plain_of",
    "pressure_lines",
    "pressure_section",
]

_STYLED = {style: plain for plain, style in PLAIN_CONTROLS.items()}  # style -> its control


def plain_of(cell: CellKey) -> CellKey | None:
    """The cell's plain control in the same slots (``restate`` -> ``restate_plain``, the
    rest of the cell equal); None for a cell whose style has none."""
    plain = _STYLED.get(cell.knobs.user_style)
    if plain is None:
        return None
    knobs = msgspec.structs.replace(cell.knobs, user_style=plain)
    return msgspec.structs.replace(cell, knobs=knobs)


class PressureLine(msgspec.Struct, frozen=True, kw_only=True, tag="pressure"):
    cell: CellKey  # the styled cell
    style: str  # its user style (restate, double)
    control: str  # its plain control's (restate_plain, double_plain)
    dose: float
    seeds: int  # seeds both cells ran with a stressed turn
    turns: int  # stressed turns over them (the same slots in both cells)
    errors: int  # the styled cell's errors on them
    control_errors: int  # the plain control's errors on the same turns
    pressure: float  # mean over seeds of (errors - control's) / stressed turns
    ci: tuple[float, float]  # percentile bootstrap over seeds
    p: float  # sign-flip permutation over seeds, two-sided
    p_holm: float = 1.0  # Holm within the family
    family: str = ""  # "Stress pressure | <model>"


_Seed = tuple[int, int, int]  # (stressed turns, styled errors, plain errors on them)


def _seed(styled: TurnOutcomes, plain: TurnOutcomes) -> _Seed | None:
    """One seed's pair of episodes on the turns both stressed (None when there are none)."""
    plain_turns = {k: (stressed, erred) for k, stressed, erred in plain.turns}
    both = [
        (erred, plain_turns[k][1])
        for k, stressed, erred in styled.turns
        if stressed and plain_turns.get(k, (False, False))[0]
    ]
    if not both:
        return None
    return len(both), sum(e for e, _ in both), sum(c for _, c in both)


def _per_seed(parts: list[TurnOutcomes]) -> dict[CellKey, dict[int, _Seed]]:
    episodes = {(p.cell, p.seed): p for p in parts}
    out: dict[CellKey, dict[int, _Seed]] = {}
    for p in parts:
        plain = plain_of(p.cell)
        other = episodes.get((plain, p.seed)) if plain is not None else None
        if other is not None and (pair := _seed(p, other)) is not None:
            out.setdefault(p.cell, {})[p.seed] = pair
    return out


def paired_cells(parts: list[TurnOutcomes]) -> set[CellKey]:
    """The styled cells with a line: a seed whose plain episode stressed a turn they share."""
    return set(_per_seed(parts))


def pressure_lines(parts: list[TurnOutcomes]) -> tuple[PressureLine, ...]:
    lines: list[PressureLine] = []
    for cell, seeds in sorted(_per_seed(parts).items(), key=lambda x: cell_sort_key(x[0])):
        d = [(e - c) / n for _, (n, e, c) in sorted(seeds.items())]
        key = f"{cell.slug()}|pressure"
        lines.append(
            PressureLine(
                cell=cell,
                style=cell.knobs.user_style,
                control=_STYLED[cell.knobs.user_style],
                dose=cell.knobs.user_dose,
                seeds=len(d),
                turns=sum(n for n, _, _ in seeds.values()),
                errors=sum(e for _, e, _ in seeds.values()),
                control_errors=sum(c for _, _, c in seeds.values()),
                pressure=sum(d) / len(d),
                ci=did_interval(d, key),
                p=sign_flip_p(d, key),
                family=f"Stress pressure | {cell.model}",
            )
        )
    adjusted = holm_by_family([x.p for x in lines], [x.family for x in lines])
    return tuple(msgspec.structs.replace(x, p_holm=a) for x, a in zip(lines, adjusted, strict=True))


def _rate(errors: int, turns: int) -> str:
    return f"{errors}/{turns}" + (f" = {errors / turns:.3f}" if turns else "")


def pressure_section(lines: tuple[PressureLine, ...]) -> list[str]:
    sizes = Counter(x.family for x in lines)
    rows = [
        [
            x.cell.arm,
            f"{x.style} - {x.control}",
            f"{x.dose:g}",
            config_label(x.cell),
            str(x.seeds),
            _rate(x.errors, x.turns),
            _rate(x.control_errors, x.turns),
            f"{x.pressure:+.3f} [{x.ci[0]:+.3f}, {x.ci[1]:+.3f}]",
            holm_cell(x.p, x.p_holm),
            f"{sizes[x.family]}",
        ]
        for x in lines
    ]
    note = (
        "A style's pressure over its plain control: restate against restate_plain, double "
        "against double_plain, the same turns, steps and work orders asked plainly "
        "(docs/stress.md, 'Controls in the same slot'). Per arm and dose, over the seeds "
        "both cells ran: the errors (any channel) on the stressed turns of each, paired by "
        "seed and turn; 'pressure' is the mean over seeds of the styled cell's excess error "
        "rate on them (each seed one cluster) with a 95% percentile bootstrap interval over "
        "seeds, and a two-sided sign-flip permutation p, Holm-adjusted within one model "
        "('family' gives its size); * marks a Holm p below 0.05. What the plain control "
        "costs against the cooperative user (the extra request) is in 'Stress per stressed "
        "turn' above."
    )
    header = ["arm", "style - control", "dose", "configuration", "seeds", "errors (styled)",
              "errors (plain), same turns", "pressure", "p / Holm", "family"]  # fmt: skip
    return markdown_section(
        "Stress pressure: a style against its plain control (ours, docs/stress.md)",
        note,
        header,
        rows,
    )


PRESSURE: Analysis[TurnOutcomes, PressureLine] = Analysis(
    name="stress_pressure",
    table="Stress: pressure",
    compute=STRESS_TURNS.compute,  # the per-turn outcomes, computed once per batch
    finish=pressure_lines,
    markdown=pressure_section,
)
