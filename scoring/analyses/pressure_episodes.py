"""A user style's pressure over its plain control on the episode scale (issue #46, ours), pure.

Beside the per-stressed-turn pressure (:mod:`scoring.analyses.pressure`), the same question
asked of whole episodes: does the styled cell succeed less often than its plain control (the
same cell, ``user_style`` its plain control, :data:`protocol.config.PLAIN_CONTROLS`), over
the seeds both ran? Per styled cell that has a per-turn line, per scoring (``strict``, the
primary; ``decline_aware``), each seed is a pair of episodes (trial 0 of the seed, as every
analysis reads it): both succeed, the styled one only, the plain one only, or neither. The
line gives each cell's successes, the discordant seeds, the paired difference of the success
proportions (styled minus plain; negative: the wording costs episodes) with Newcombe's
(1998) hybrid score interval for paired data (:func:`scoring.results.stats.
paired_difference`), and the exact McNemar p on the discordant seeds
(:func:`scoring.results.stats.mcnemar_exact`, as the ladder's contrasts). **Holm** adjusts
within the family ``Stress pressure, episodes | <scoring> | <model>``: one question asked of
one model under one scoring, every style, dose, configuration and arm together, as the
ladder's contrasts are corrected within a scoring (docs/scoring.md); a family apart from the
per-turn one, so its Holm p-values stay as they were.
"""

from __future__ import annotations

from collections import Counter

import msgspec

from protocol.config import config_label
from protocol.records import CellKey
from scoring.analyses.base import Analysis
from scoring.analyses.doses import holm_by_family, holm_cell
from scoring.analyses.pressure import PRESSURE, paired_cells, plain_of
from scoring.analyses.stress_turns import TurnOutcomes
from scoring.md_table import markdown_table
from scoring.results.cells import SCORINGS, cell_sort_key
from scoring.results.stats import mcnemar_exact, paired_difference

__all__ = [
    "PRESSURE_EPISODES",
    "PressureEpisodeLine",
    "pressure_episode_lines",
    "pressure_episode_section",
]


class PressureEpisodeLine(msgspec.Struct, frozen=True, kw_only=True, tag="pressure_episodes"):
    cell: CellKey  # the styled cell
    style: str  # its user style (restate, double)
    control: str  # its plain control's (restate_plain, double_plain)
    dose: float
    scoring: str  # "strict" (the primary scoring) or "decline_aware"
    seeds: int  # seeds both cells ran (counted)
    successes: int  # the styled cell's successes over them
    control_successes: int  # the plain control's
    styled_only: int  # seeds the styled episode won and the plain one lost
    plain_only: int  # seeds the plain episode won and the styled one lost
    diff: float  # (successes - control_successes) / seeds
    ci: tuple[float, float]  # Newcombe's paired interval, 95%
    p: float  # exact McNemar on the discordant seeds, two-sided
    p_holm: float = 1.0  # Holm within the family
    family: str = ""  # "Stress pressure, episodes | <scoring> | <model>"


def _won(p: TurnOutcomes, scoring: str) -> bool:
    return p.success if scoring == "strict" else p.decline_aware


def _line(
    cell: CellKey, pairs: list[tuple[TurnOutcomes, TurnOutcomes]], scoring: str
) -> PressureEpisodeLine:
    won = [(_won(s, scoring), _won(c, scoring)) for s, c in pairs]
    both = sum(s and c for s, c in won)
    styled_only = sum(s and not c for s, c in won)
    plain_only = sum(c and not s for s, c in won)
    neither = len(won) - both - styled_only - plain_only
    plain = plain_of(cell)
    assert plain is not None
    return PressureEpisodeLine(
        cell=cell,
        style=cell.knobs.user_style,
        control=plain.knobs.user_style,
        dose=cell.knobs.user_dose,
        scoring=scoring,
        seeds=len(won),
        successes=both + styled_only,
        control_successes=both + plain_only,
        styled_only=styled_only,
        plain_only=plain_only,
        diff=(styled_only - plain_only) / len(won),
        ci=paired_difference(both, styled_only, plain_only, neither),
        p=mcnemar_exact(styled_only, plain_only),
        family=f"Stress pressure, episodes | {scoring} | {cell.model}",
    )


def pressure_episode_lines(parts: list[TurnOutcomes]) -> tuple[PressureEpisodeLine, ...]:
    """A line per styled cell with a per-turn pressure line and per scoring."""
    by_cell: dict[CellKey, dict[int, TurnOutcomes]] = {}
    for p in parts:
        by_cell.setdefault(p.cell, {})[p.seed] = p
    lines: list[PressureEpisodeLine] = []
    for cell in sorted(paired_cells(parts), key=cell_sort_key):
        plain = plain_of(cell)
        assert plain is not None  # a cell with a per-turn line has a plain control
        mine, theirs = by_cell[cell], by_cell[plain]
        pairs = [(mine[s], theirs[s]) for s in sorted(mine.keys() & theirs.keys())]
        lines += [_line(cell, pairs, scoring) for scoring in SCORINGS]
    adjusted = holm_by_family([x.p for x in lines], [x.family for x in lines])
    return tuple(msgspec.structs.replace(x, p_holm=a) for x, a in zip(lines, adjusted, strict=True))


def pressure_episode_section(lines: tuple[PressureEpisodeLine, ...]) -> list[str]:
    """The episode scale, a subsection of "Stress pressure" (its per-turn table above)."""
    if not lines:
        return []
    sizes = Counter(x.family for x in lines)
    rows = [
        [
            x.cell.arm,
            f"{x.style} - {x.control}",
            f"{x.dose:g}",
            config_label(x.cell),
            x.scoring,
            str(x.seeds),
            f"{x.successes}/{x.seeds}",
            f"{x.control_successes}/{x.seeds}",
            f"{x.styled_only} / {x.plain_only}",
            f"{x.diff:+.3f} [{x.ci[0]:+.3f}, {x.ci[1]:+.3f}]",
            holm_cell(x.p, x.p_holm),
            f"{sizes[x.family]}",
        ]
        for x in lines
    ]
    note = (
        "The same cells on the episode scale: per scoring (strict, the primary; "
        "decline_aware), each cell's successes over the seeds both ran, paired by seed; the "
        "discordant seeds (styled only / plain only); the difference of the two success "
        "proportions, styled minus plain (negative: the wording costs episodes), with "
        "Newcombe's 95% hybrid score interval for paired proportions; and the exact McNemar "
        "p on the discordant seeds, Holm-adjusted within one scoring of one model ('family' "
        "gives its size, a family apart from the per-turn lines'); * marks a Holm p below "
        "0.05. An episode already failed elsewhere hides the wording here; the per-turn "
        "lines above read it where it acts (docs/scoring.md)."
    )
    header = ["arm", "style - control", "dose", "configuration", "scoring", "seeds",
              "success (styled)", "success (plain)", "styled only / plain only",
              "difference", "p / Holm", "family"]  # fmt: skip
    return ["", "### On the episode scale", "", note, "", markdown_table(header, rows)]


PRESSURE_EPISODES: Analysis[TurnOutcomes, PressureEpisodeLine] = Analysis(
    name="stress_pressure_episodes",
    table="Stress: pressure",
    compute=PRESSURE.compute,  # the per-turn outcomes, computed once per batch
    finish=pressure_episode_lines,
    markdown=pressure_episode_section,
)
