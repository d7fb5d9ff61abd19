"""Table 4's extra columns, from logged episodes (pure).

* ``misrouted``: of the failing episodes with an omission (``omission_failures``), those
  whose first omitted ask was answered by naming a different step: on the first turn with an
  omission error, the matcher resolved the request to a step other than the scripted one
  (``TurnRecord.matched_step``), so the gate's directive named that other step. This reading
  of "answered by naming a different step" (the gate arms' third block of Table 4) is ours
  (docs/scoring.md).
* ``ambiguous_booked``: ambiguous probes on which the agent booked a work order, of the
  ambiguous probes played (``ambiguous``): a primary execution on the probe's turn, which by
  the scorer's rules carries the probe's own work order (a citation of an earlier receipt is
  a re-display, not a booking).

* ``agreement``: matcher agreement over the ask, premature and redo-probe turns (the turns
  tier 2 rewrites, ``scoring.results.gate_report.REWRITTEN_KINDS``) on which the matcher ran, as the
  helpers table's ``rewritten_agreement``; None where no matcher ran (text arms).

Only counted episodes enter; every cell gets a line.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from protocol.config import config_label
from protocol.records import CellKey, EpisodeRecord
from scoring.analyses.base import Analysis, by_cell, markdown_section, uncached
from scoring.replay.episode_score import EpisodeScore
from scoring.results.cells import cell_sort_key
from scoring.results.gate_report import REWRITTEN_KINDS

__all__ = ["WORDING", "WordingLine", "wording_lines"]


class WordingLine(msgspec.Struct, frozen=True, kw_only=True, tag="wording"):
    cell: CellKey
    episodes: int
    omission_failures: int  # failing episodes with at least one omission
    misrouted: int  # ... whose first omitted ask the matcher resolved to another step
    ambiguous: int  # ambiguous probes played
    ambiguous_booked: int  # ... on which the agent booked a work order
    matched_turns: int = 0  # ask / premature / redo-probe turns the matcher ran on
    matched_agree: int = 0  # ... whose matched step is the scripted one
    agreement: float | None = None


def wording_lines(pairs: Iterable[tuple[EpisodeRecord, EpisodeScore]]) -> list[WordingLine]:
    """One line per cell (scores need per-turn detail)."""
    acc: dict[CellKey, list[int]] = {}
    for record, score in pairs:
        if not score.counted:
            continue
        a = acc.setdefault(record.cell, [0, 0, 0, 0, 0, 0, 0])
        a[0] += 1
        first = None  # the first turn with an omission (one pass over the turns, #50)
        for t, s in zip(record.turns, score.primary.turns, strict=False):
            if first is None and s.errors and any(e.channel == "omission" for e in s.errors):
                first = t
            if t.kind == "ambiguous":
                a[3] += 1
                a[4] += bool(s.executed)
            if t.kind in REWRITTEN_KINDS and t.matched_redo is not None:
                a[5] += 1
                a[6] += t.matched_step == t.step
        if first is not None and not score.primary.success:
            a[1] += 1
            a[2] += first.matched_step is not None and first.matched_step != first.step
    return [
        WordingLine(
            cell=cell,
            episodes=a[0],
            omission_failures=a[1],
            misrouted=a[2],
            ambiguous=a[3],
            ambiguous_booked=a[4],
            matched_turns=a[5],
            matched_agree=a[6],
            agreement=a[6] / a[5] if a[5] else None,
        )
        for cell, a in sorted(acc.items(), key=lambda kv: cell_sort_key(kv[0]))
    ]


def _markdown(lines: tuple[WordingLine, ...]) -> list[str]:
    gated = [w for w in lines if w.ambiguous or w.omission_failures or w.matched_turns]
    header = ["arm", "configuration", "matcher agreement (ask, premature, redo)",
              "first omitted ask misrouted", "ambiguous booked"]  # fmt: skip
    rows = [
        [
            w.cell.arm,
            config_label(w.cell),
            f"{w.matched_agree}/{w.matched_turns} = {w.agreement:.3f}"
            if w.agreement is not None
            else "-",
            f"{w.misrouted}/{w.omission_failures}",
            f"{w.ambiguous_booked}/{w.ambiguous}",
        ]
        for w in gated
    ]
    return markdown_section(
        "Wording columns (Table 4 shape)",
        "Matcher agreement over the ask, premature and redo-probe turns; failing episodes "
        "with an omission whose first omitted ask the matcher resolved to "
        "another step, over the failing episodes with an omission; ambiguous probes on "
        "which the agent booked a work order, over the probes played.",
        header,
        rows,
    )


WORDING: Analysis[WordingLine, WordingLine] = Analysis(
    name="wording",
    table="Table 4",
    compute=uncached(wording_lines),
    finish=by_cell,
    markdown=_markdown,
)
