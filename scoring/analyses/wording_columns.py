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

Only counted episodes enter; every cell gets a line. The compute is a
:class:`~scoring.analyses.base.Fold`: each episode gives its cell and its counts of the
above, and the batch's lines sum them per cell.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from protocol.config import config_label
from protocol.records import CellKey, TurnRecord
from scoring.analyses.base import Analysis, Fold, Pair, by_cell, markdown_section
from scoring.analyses.tallies import Tallied, by_cell_sums
from scoring.replay.episode_score import TurnScore
from scoring.replay.ground_truth import EpisodeCache
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


# One counted episode's tallies: 1 (an episode), 1 when it is a failing episode with an
# omission, 1 when its first omitted ask was misrouted, its ambiguous probes, those booked,
# its turns the matcher ran on among REWRITTEN_KINDS, those it agreed on
def _each(pair: Pair, cache: EpisodeCache) -> Tallied | None:
    record, score = pair
    if not score.counted:
        return None
    primary = score.primary
    scored = primary.turns
    turns = record.turns
    if len(scored) < len(turns):
        turns = turns[: len(scored)]  # the turns the scores reach, as zip reads them
    ambiguous = booked = matched = agree = 0
    # one pass for the probes and the matcher; the first omission is looked for only in a
    # failing episode that has one (#50)
    for i, t in enumerate(turns):
        kind = t.kind
        if kind == "ambiguous":
            ambiguous += 1
            booked += bool(scored[i].executed)
        if t.matched_redo is not None and kind in REWRITTEN_KINDS:
            matched += 1
            agree += t.matched_step == t.step
    failing = misrouted = False
    if not primary.success and primary.channels["omission"]:
        first = _first_omission(turns, scored)
        if first is not None:
            failing = True
            misrouted = first.matched_step is not None and first.matched_step != first.step
    return (record.cell, (1, failing, misrouted, ambiguous, booked, matched, agree))


def _first_omission(turns: Sequence[TurnRecord], scored: Sequence[TurnScore]) -> TurnRecord | None:
    """The first turn with an omission error (None: none)."""
    for t, s in zip(turns, scored, strict=False):
        if s.errors and any(e.channel == "omission" for e in s.errors):
            return t
    return None


def _whole(episodes: list[Tallied]) -> list[WordingLine]:
    """One line per cell, from its counted episodes' tallies."""
    acc = by_cell_sums(episodes)
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


_FOLD = Fold(_each, _whole)


def wording_lines(pairs: Iterable[Pair]) -> list[WordingLine]:
    """One line per cell (scores need per-turn detail)."""
    return list(_FOLD(pairs, EpisodeCache()))  # the cache unread: no episode regenerated


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
    compute=_FOLD,
    finish=by_cell,
    markdown=_markdown,
)
