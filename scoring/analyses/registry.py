"""The log analyses beside the ladder tables, listed once for ``ladder report`` (pure).

:data:`ANALYSES` is every report table (:class:`scoring.analyses.base.Analysis`), each declared
in the module that computes it: Table 11's obedience (:mod:`scoring.analyses.obedience`), Table 10's
omission attribution (:mod:`scoring.analyses.omission_attribution`), Table 4's extra columns
(:mod:`scoring.analyses.wording_columns`), Table 12's corruption replay with the receipts-repair
counterfactual (:mod:`scoring.analyses.corruption_replay`) and the validator-gated hybrid scored
offline (:mod:`scoring.analyses.hybrid_counterfactual`). :func:`batched_analyses` runs them over
scored records (per-turn detail), :func:`analysis_sections` renders them as Markdown sections
in this order, and :meth:`Analyses.json` is the JSON the report writes beside report.md. A
table whose cells are absent is left out. A new table: docs/extending.md.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import msgspec

from protocol.records import CellKey, EpisodeRecord
from protocol.registry import Registry
from scoring.analyses.askback import ASKBACK
from scoring.analyses.base import Analyses, Analysis, Pair, Table
from scoring.analyses.corruption_replay import CORRUPTION
from scoring.analyses.doses import DOSE_RESPONSE, INTERACTION, control_of
from scoring.analyses.hybrid_counterfactual import HYBRID
from scoring.analyses.obedience import OBEDIENCE
from scoring.analyses.omission_attribution import OMISSION_ATTRIBUTION
from scoring.analyses.pressure import PRESSURE
from scoring.analyses.pressure_episodes import PRESSURE_EPISODES
from scoring.analyses.semantics import BUDGET, EXCLUSIVE, EXPIRY
from scoring.analyses.sessions import SESSIONS
from scoring.analyses.stress import SPOOF, TOOL_FAILURE, USER_STYLE
from scoring.analyses.stress_turns import STRESS_TURNS, TURN_INTERACTION
from scoring.analyses.wording_columns import WORDING
from scoring.gc_pause import paused_gc
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.families import DEFAULT_FAMILY, score_lines
from scoring.results.gate_report import flag_inert, helper_lines
from scoring.results.lines import ResultLine, with_status
from scoring.results.offline import score_records

__all__ = [
    "ANALYSES",
    "STRESS_ONLY",
    "Analyses",
    "analysis_sections",
    "batch_parts",
    "batched_analyses",
    "finished_analyses",
    "log_analyses",
    "mergeable",
    "scored_once",
    "stress_free",
]

Parts = dict[str, list[object]]  # one batch's parts, by analysis name

# The report's tables, in the report's order (and the JSON's); another package adds one
# through the ``state_ladder.analyses`` entry points (docs/extending.md).
ANALYSES: Registry[Table] = Registry(
    "analysis",
    lambda o: all(hasattr(o, a) for a in ("name", "collector", "section")),
    group="state_ladder.analyses",
)
for _table in (
    OBEDIENCE,
    OMISSION_ATTRIBUTION,
    WORDING,
    CORRUPTION,
    HYBRID,
    *(SPOOF, TOOL_FAILURE, USER_STYLE),  # the stress knobs (#31, ours)
    ASKBACK,  # ask back and escalation (#38, ours)
    *(DOSE_RESPONSE, INTERACTION),  # the stress doses and interactions (#37, ours)
    *(STRESS_TURNS, TURN_INTERACTION),  # the same per stressed turn (#46, ours)
    PRESSURE,  # a user style against its plain control in the same slot (#46, ours)
    PRESSURE_EPISODES,  # the same on the episode scale, under the per-turn table (#46, ours)
    *(BUDGET, EXPIRY, EXCLUSIVE),  # the rules beyond one-shot state (#48, ours)
    SESSIONS,  # several sessions with a handoff (#48, ours)
):
    ANALYSES.add(_table.name, _table)


# The analyses whose every line is a stressed cell's (a stress knob set:
# :func:`scoring.analyses.doses.control_of` unsets them), read beside cells that differ from
# it in knobs only (its control, its plain style, its other doses): the parts of cells none
# of which is stressed, and that no stressed cell of the run shares all but its knobs with,
# add nothing to them (``ladder report``'s workers leave them out: #50).
_STRESS_TABLES = (DOSE_RESPONSE, INTERACTION, STRESS_TURNS, TURN_INTERACTION, PRESSURE)
STRESS_ONLY = frozenset(t.name for t in (*_STRESS_TABLES, PRESSURE_EPISODES, SESSIONS))


def stress_free(cell: CellKey) -> bool:
    """Whether ``cell`` has no stress knob set (its parts of :data:`STRESS_ONLY` matter
    only beside a stressed cell of the same configuration and arm)."""
    return control_of(cell) == cell


def log_analyses(pairs: Iterable[Pair], episodes: EpisodeCache | None = None) -> Analyses:
    """Every analysis of *pairs* (one batch)."""
    return batched_analyses([list(pairs)], episodes)


def batched_analyses(
    batches: Iterable[Sequence[Pair]],
    episodes: EpisodeCache | None = None,
    analyses: Sequence[Table] | None = None,
) -> Analyses:
    """Every analysis over *batches* whose cells do not straddle batches (a run's log files:
    one cell each), keeping only what each analysis makes of a batch, so a large run
    streams file by file. The analyses pair episodes by seed: with repeated trials
    (--trials, #40) they read trial 0 of each seed, the episode a run without trials has."""
    cache = episodes if episodes is not None else EpisodeCache()
    tables = ANALYSES.entries() if analyses is None else analyses
    collectors = [(a.name, a.collector()) for a in tables]
    for batch in batches:
        first = [p for p in batch if p[0].trial == 0]  # trial 0 of each seed (#40)
        shared: dict[object, Sequence[object]] = {}  # one compute per batch, however many read it
        for _, c in collectors:
            c.add(first, cache, shared)
    return Analyses({name: c.lines() for name, c in collectors})


def mergeable(analyses: Sequence[Table] | None = None) -> bool:
    """Whether every analysis is an :class:`~scoring.analyses.base.Analysis` (a compute and
    a finish), whose batches' parts can be computed apart (a worker process each) and
    finished together: :func:`batch_parts` and :func:`finished_analyses`."""
    tables = ANALYSES.entries() if analyses is None else analyses
    return all(isinstance(t, Analysis) for t in tables)


def batch_parts(
    batch: Sequence[Pair],
    cache: EpisodeCache,
    analyses: Sequence[Table] | None = None,
    skip: Collection[str] = (),
) -> Parts:
    """What each analysis makes of one batch (one cell's pairs), as
    :func:`batched_analyses` collects it: trial 0 of each seed, one compute per batch
    however many analyses read it; none for the analyses named in ``skip`` (a caller that
    knows they cannot read the batch: :data:`STRESS_ONLY`). Only for :func:`mergeable`
    analyses."""
    tables = ANALYSES.entries() if analyses is None else analyses
    first = [p for p in batch if p[0].trial == 0]  # trial 0 of each seed (#40)
    shared: dict[object, list[object]] = {}
    out: Parts = {}
    for t in tables:
        assert isinstance(t, Analysis)  # mergeable() said so
        if t.name in skip:
            out[t.name] = []
            continue
        if t.compute not in shared:
            shared[t.compute] = list(t.compute(first, cache))
        out[t.name] = shared[t.compute]
    return out


def finished_analyses(
    batches: Iterable[Parts], analyses: Sequence[Table] | None = None
) -> Analyses:
    """The analyses from every batch's :func:`batch_parts`, in the batches' order: the same
    lines :func:`batched_analyses` makes of the same batches."""
    tables = ANALYSES.entries() if analyses is None else analyses
    parts: Parts = {t.name: [] for t in tables}
    for batch in batches:
        for name, xs in batch.items():
            parts[name] += xs
    out: dict[str, tuple[msgspec.Struct, ...]] = {}
    for t in tables:
        assert isinstance(t, Analysis)  # mergeable() said so
        out[t.name] = t.finish(parts[t.name])
    return Analyses(out)


def analysis_sections(a: Analyses, analyses: Sequence[Table] | None = None) -> list[str]:
    """Markdown lines of the analyses present (empty when none applies)."""
    tables = ANALYSES.entries() if analyses is None else analyses
    return [line for t in tables for line in t.section(a)]


def scored_once(
    records: Sequence[EpisodeRecord],
    episodes: EpisodeCache | None = None,
    family: str = DEFAULT_FAMILY,
) -> tuple[list[ResultLine], Analyses]:
    """One scoring pass (per-turn detail) over *records* (a run's, the last of each
    (cell, seed)) for all a report shows: the cell, contrast and helper lines, as
    :func:`scoring.results.offline.rescore` gives them, and every analysis, fed one cell at a time."""
    cache = episodes if episodes is not None else EpisodeCache()
    scores = score_records(records, cache, detail=True)
    cells: dict[CellKey, list[Pair]] = {}
    for pair in zip(records, scores, strict=True):
        cells.setdefault(pair[0].cell, []).append(pair)
    analyses = batched_analyses(cells.values(), cache)
    with paused_gc():
        lines = flag_inert([*score_lines(scores, family), *helper_lines(records)])
    return with_status(lines, "final"), analyses
