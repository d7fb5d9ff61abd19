"""One row per scored episode (``ladder score --episodes``; JSON lines of type ``episode``).

:func:`episode_row` joins an :class:`~protocol.records.EpisodeRecord` and its
:class:`~scoring.replay.episode_score.EpisodeScore` into an :class:`EpisodeRow`: the cell's key, slug and
the episode id (``<slug>/<seed>``), strict (primary) and decline-aware success, the first
turn with an error under the primary scoring (its index, kind and the first channel of its
errors in :data:`protocol.state.machine.CHANNELS` order), the error count of every channel, the
agent's and the helpers' tokens and calls (as :func:`protocol.records.with_totals` counts
them, recomputed from the turns so old logs give them too), wall time and termination.
``flat_row("episode", row.cell, row)`` gives the flat JSON line. Pure.

The first failing turn needs the per-turn detail: score with ``detail=True``.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from protocol.records import CellKey, EpisodeRecord, with_totals
from protocol.state.machine import CHANNELS
from scoring.replay.episode_score import EpisodeScore, Scoring
from scoring.results.cells import cell_sort_key

__all__ = ["EpisodeRow", "episode_row", "episode_rows"]


class EpisodeRow(msgspec.Struct, frozen=True, kw_only=True):
    cell: CellKey
    slug: str
    episode_id: str
    seed: int
    trial: int  # which trial of its seed (--trials); 0 without repeated trials (#49)
    termination: str
    counted: bool  # scorable and not an infrastructure error (counted in a cell's n)
    strict: bool  # strict success, primary scoring
    decline_aware: bool  # strict success, decline-aware scoring
    first_failing_turn: int | None  # index of the first turn with an error (primary)
    first_failing_kind: str | None
    first_failing_channel: str | None
    errors: int  # errors over all channels (primary)
    re_execution: int
    superseded: int
    premature: int
    omission: int
    unrequested: int
    refused_redo: int
    turns: int
    turns_ok: int
    refused: int  # bookings a gate refused
    prompt_tokens: int  # the agent's calls
    completion_tokens: int
    agent_tokens: int
    cached_tokens: int | None  # None: the server did not report them
    agent_calls: int
    re_asks: int
    helper_calls: int  # helper requests made
    helper_cached: int  # helper calls served from the cache
    helper_tokens: int
    wall_s: float
    mismatches: int  # consistency findings against the regenerated episode
    # replies cut at their token budget (finish_reason length), per role (#49)
    cut_agent: int = 0
    cut_matcher: int = 0
    cut_compiler: int = 0


def _first_failure(scoring: Scoring) -> tuple[int | None, str | None, str | None]:
    for t in scoring.turns:
        if t.errors:
            channels = {e.channel for e in t.errors}
            first = next(ch for ch in CHANNELS if ch in channels)
            return t.index, t.kind, first
    return None, None, None


def episode_row(record: EpisodeRecord, score: EpisodeScore) -> EpisodeRow:
    """The row of one episode; *score* must be *record*'s, scored with ``detail=True``."""
    totals = with_totals(record)
    primary = score.primary
    turn, kind, channel = _first_failure(primary)
    ch = primary.channels
    return EpisodeRow(
        cell=record.cell,
        slug=totals.slug,
        episode_id=totals.episode_id,
        seed=record.spec.seed,
        trial=record.trial,
        termination=record.termination,
        counted=score.counted,
        strict=score.counted and primary.success,
        decline_aware=score.counted and score.decline_aware.success,
        first_failing_turn=turn,
        first_failing_kind=kind,
        first_failing_channel=channel,
        errors=primary.errors,
        re_execution=ch["re_execution"],
        superseded=ch["superseded"],
        premature=ch["premature"],
        omission=ch["omission"],
        unrequested=ch["unrequested"],
        refused_redo=ch["refused_redo"],
        turns=primary.n_turns,
        turns_ok=primary.turns_ok,
        refused=score.refused,
        prompt_tokens=totals.prompt_tokens,
        completion_tokens=totals.completion_tokens,
        agent_tokens=totals.agent_tokens,
        cached_tokens=totals.cached_tokens,
        agent_calls=totals.agent_calls,
        re_asks=sum(t.dynamic for t in record.turns),
        helper_calls=totals.helper_calls,
        helper_cached=totals.helper_cached,
        helper_tokens=totals.helper_tokens,
        wall_s=record.wall_s,
        mismatches=len(score.mismatches),
        cut_agent=score.cut.get("agent", (0, 0))[0],
        cut_matcher=score.cut.get("matcher", (0, 0))[0],
        cut_compiler=score.cut.get("compiler", (0, 0))[0],
    )


def episode_rows(pairs: Iterable[tuple[EpisodeRecord, EpisodeScore]]) -> list[EpisodeRow]:
    """Rows of (record, score) pairs, sorted by cell (ladder order) and seed."""
    rows = [episode_row(r, s) for r, s in pairs]
    rows.sort(key=lambda row: (cell_sort_key(row.cell), row.seed))
    return rows
