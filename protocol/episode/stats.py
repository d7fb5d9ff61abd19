"""Schedule figures over a set of episodes (issue #27): where the revision falls, what is
asked after it, how many ambiguous probes are planned. ``ladder generate --summary`` prints
them; ``docs/protocol.md`` quotes them."""

from __future__ import annotations

import statistics
from collections.abc import Iterable

import msgspec

from protocol.records import Episode

__all__ = ["ScheduleFigures", "schedule_figures"]

_ASKS = ("ask", "re_ask")


class ScheduleFigures(msgspec.Struct, frozen=True, kw_only=True):
    episodes: int
    revision_mean: float  # the revision's turn index (0-based), mean over the episodes
    revision_quartiles: tuple[float, float, float]
    revision_range: tuple[int, int]
    post_revision_asks: float  # planned asks (ask or re-ask) after the revision, mean
    no_ask_after: int  # episodes with no planned ask after the revision
    revised_asked_after: int  # episodes asking a rewired or relaxed step after the revision
    ambiguous: int  # planned ambiguous probes (version 4; version 3's are candidates)


def schedule_figures(episodes: Iterable[Episode]) -> ScheduleFigures:
    revs: list[int] = []
    after_counts: list[int] = []
    no_ask = touched_after = amb = 0
    for ep in episodes:
        at = next(t.index for t in ep.turns if t.kind == "revision")
        revs.append(at)
        after = [t for t in ep.turns[at + 1 :] if t.kind in _ASKS]
        after_counts.append(len(after))
        no_ask += not after
        rev = ep.revision
        touched = set(rev.rewires) | ({rev.relax[0]} if rev.relax else set())
        touched_after += any(t.step in touched for t in after)
        amb += sum(t.kind == "ambiguous" for t in ep.turns)
    q = statistics.quantiles(revs, n=4) if len(revs) > 1 else [float(revs[0])] * 3
    return ScheduleFigures(
        episodes=len(revs),
        revision_mean=round(statistics.mean(revs), 2),
        revision_quartiles=(q[0], q[1], q[2]),
        revision_range=(min(revs), max(revs)),
        post_revision_asks=round(statistics.mean(after_counts), 2),
        no_ask_after=no_ask,
        revised_asked_after=touched_after,
        ambiguous=amb,
    )
