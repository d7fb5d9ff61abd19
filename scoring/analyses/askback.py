"""The report section "Ask back and escalation" (issue #38; ours, docs/askback.md), pure.

Per cell with ``show``, ``ask`` or ``escalate`` on: strict success (Wilson 95%), its Holm
family's reference on the shared seeds (the same cell with that knob alone off; a cell with
two of them against the cell with the later one only, ``show`` + ``ask`` against ``ask``:
:func:`scoring.results.families.variant_reference`, #46), the seeds only
one of the two won, the exact McNemar p (uncorrected: the Holm-adjusted one is in the
contrasts table, family "Ask back and escalation", where each knob's cell is contrasted with
the same cell with that knob alone off), and the user's burden
(:mod:`scoring.replay.askback`): questions and escalations per episode, the readings and
bookings they recovered, and what each recovery cost the user in asks. Its compute is a
:class:`~scoring.analyses.base.Fold`: a gate arm's counted episode gives its seed, success
and burden as it is read, a batch's cells are made from them.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from protocol.arms.table import arm_spec
from protocol.config import config_label
from protocol.records import CellKey, Knobs
from scoring.analyses.base import Analysis, Fold, Pair, markdown_section
from scoring.analyses.tallies import cell_groups
from scoring.replay.askback import Burden, askback_on, per_recovery
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import cell_sort_key
from scoring.results.families import variant_reference
from scoring.results.stats import mcnemar_exact, wilson

__all__ = [
    "ASKBACK",
    "AskBackLine",
    "AskBackPart",
    "askback_lines",
    "askback_parts",
    "askback_section",
]

_OFF = {"show": False, "ask": "off", "escalate": False}


class AskBackPart(msgspec.Struct, frozen=True, kw_only=True):
    """One cell of a gate arm (knobs on, or its reference with them off): per-seed success."""

    cell: CellKey
    wins: dict[int, bool]
    burden: Burden | None


class AskBackLine(msgspec.Struct, frozen=True, kw_only=True, tag="askback"):
    cell: CellKey
    knobs: str  # the ask-back knobs set, e.g. "ask=second_reading"
    episodes: int
    successes: int
    success_ci: tuple[float, float]
    reference_successes: int | None  # the reference cell on the shared seeds (None: absent)
    shared: int  # seeds both cells counted
    only_on: int  # shared seeds only the knobs' cell won
    only_off: int  # shared seeds only the reference won
    p: float | None  # exact McNemar, uncorrected
    burden: Burden
    reference: str = ""  # the reference's ask-back knobs ("" : every knob off)


def _reference(cell: CellKey) -> CellKey:
    """The same configuration with every ask-back knob off (the configuration column)."""
    return msgspec.structs.replace(cell, knobs=msgspec.structs.replace(cell.knobs, **_OFF))


def _family_reference(cell: CellKey) -> CellKey:
    """The cell the Holm family contrasts ``cell`` with (the reference column)."""
    return variant_reference(cell) or _reference(cell)


_Wins = tuple[CellKey, int, bool, Burden | None]  # cell, seed, strict success, burden


def _wins(pair: Pair, cache: EpisodeCache) -> _Wins | None:
    """A counted episode of a gate arm: its seed, strict success and the user's burden."""
    record, score = pair
    spec = arm_spec(record.cell.arm)  # a gate: gate_arms(), without listing them all (#50)
    if spec is None or not spec.matcher or not score.counted:
        return None
    return record.cell, score.seed, score.primary.success, score.burden


def _parts(values: list[_Wins]) -> list[AskBackPart]:
    out: list[AskBackPart] = []
    for cell, episodes in cell_groups(values).items():
        wins: dict[int, bool] = {}
        burden: Burden | None = None
        for _, seed, success, more in episodes:
            wins[seed] = success
            burden = _plus(burden, more)
        out.append(AskBackPart(cell=cell, wins=wins, burden=burden))
    return out


def askback_parts(batch: Sequence[Pair]) -> list[AskBackPart]:
    """The batch's gate-arm cells (one log file: one cell)."""
    return list(_PARTS(batch, EpisodeCache()))


def _plus(a: Burden | None, b: Burden | None) -> Burden | None:
    return b if a is None else a if b is None else a + b


def askback_lines(parts: list[AskBackPart]) -> tuple[AskBackLine, ...]:
    """One line per cell with a knob on, beside its knobs-off reference where it ran."""
    cells: dict[CellKey, AskBackPart] = {}
    for p in parts:  # a cell split over batches: merge
        have = cells.get(p.cell)
        if have is None:
            cells[p.cell] = p
            continue
        burden = _plus(have.burden, p.burden)
        cells[p.cell] = AskBackPart(cell=p.cell, wins={**have.wins, **p.wins}, burden=burden)
    lines: list[AskBackLine] = []
    for cell in sorted(cells, key=cell_sort_key):
        if not askback_on(cell.knobs):
            continue
        part = cells[cell]
        k, n = sum(part.wins.values()), len(part.wins)
        ref_cell = _family_reference(cell)
        ref = cells.get(ref_cell)
        shared = sorted(part.wins.keys() & ref.wins.keys()) if ref is not None else []
        on = sum(part.wins[s] and not ref.wins[s] for s in shared) if ref else 0
        off = sum(ref.wins[s] and not part.wins[s] for s in shared) if ref else 0
        lines.append(
            AskBackLine(
                cell=cell,
                knobs=_knob_text(cell.knobs),
                episodes=n,
                successes=k,
                success_ci=wilson(k, n),
                reference_successes=sum(ref.wins[s] for s in shared) if ref else None,
                shared=len(shared),
                only_on=on,
                only_off=off,
                p=mcnemar_exact(on, off) if ref is not None else None,
                burden=part.burden or Burden(),
                reference=_knob_text(ref_cell.knobs),
            )
        )
    return tuple(lines)


def _knob_text(knobs: Knobs) -> str:
    return ",".join(f"{f}={v}" for f, v in knobs.changed().items() if f in _OFF)


def askback_section(lines: tuple[AskBackLine, ...]) -> list[str]:
    """The Markdown section (empty when no cell has a knob on)."""
    rows = []
    for x in lines:
        b, n = x.burden, max(1, x.episodes)
        ref = "-" if x.reference_successes is None else f"{x.reference_successes}/{x.shared}"
        ref += f" [{x.reference}]" if x.reference else " [off]"
        rows.append(
            [
                x.cell.arm,
                x.knobs,
                config_label(_reference(x.cell)),
                f"{x.successes}/{x.episodes} [{x.success_ci[0]:.3f}, {x.success_ci[1]:.3f}]",
                ref,
                "-" if x.p is None else f"{x.only_on}/{x.only_off} p={x.p:.3g}",
                f"{b.questions / n:.2f} / {b.escalations / n:.2f}",
                f"{b.recovered} / {b.overrides}",
                per_recovery(b),
                f"{b.extra_tokens / n:,.0f}",
            ]
        )
    header = [
        "arm",
        "knobs",
        "configuration",
        "strict success",
        "reference (shared seeds) [its knobs]",
        "only on / only off",
        "questions / escalations per ep",
        "readings / bookings recovered",
        "asks per recovery",
        "extra matcher tok/ep",
    ]
    note = (
        "The gate that shows the step it resolved, asks the user back when its reading is not "
        "to be trusted, and puts its refusals to the user (Section 5.5's recommendation, which "
        "the paper did not run; our design, docs/askback.md). Strict success with its Wilson "
        "95% interval beside its Holm family's reference on the shared seeds: the same cell "
        "with that knob alone off, [its knobs] named ([off]: every knob off); a cell with "
        "two knobs against the cell with the later one only (exact McNemar, uncorrected; "
        'Holm within model in the contrasts table, family "Ask back and escalation"), and '
        "the user's burden; pure cost (asks that recovered nothing) reads 'N asked, 0 "
        "recovered'."
    )
    return markdown_section("Ask back and escalation", note, header, rows)


_PARTS = Fold(_wins, _parts)

ASKBACK: Analysis[AskBackPart, AskBackLine] = Analysis(
    name="askback",
    table="Ask back and escalation",
    compute=_PARTS,
    finish=askback_lines,
    markdown=askback_section,
)
