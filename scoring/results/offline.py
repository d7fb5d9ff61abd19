"""Offline rescoring: every record of a run, scored with one episode cache.

Loading and scoring a grid builds millions of small objects that never form cycles; the
cyclic garbage collector would walk all of them again and again (more than doubling the time
to read a 10,000-episode log). :func:`paused_gc` pauses it around such bulk work; reference
counting still frees everything as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from protocol.records import EpisodeRecord
from protocol.versions import SpecError
from scoring.analyses.gate_report import flag_inert, helper_lines
from scoring.replay.episode import EpisodeScore, Replays, score_episode
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.families import DEFAULT_FAMILY, score_lines
from scoring.results.lines import ResultLine, with_status

__all__ = ["paused_gc", "rescore", "score_records"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (restored afterwards)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def score_records(
    records: Iterable[EpisodeRecord],
    cache: EpisodeCache | None = None,
    *,
    detail: bool = False,
    replays: Replays | None = None,
) -> list[EpisodeScore]:
    """One :class:`EpisodeScore` per record, regenerating each spec's episode once and
    replaying each (episode, turns, executions) once (compact scores unless *detail*:
    aggregation needs no per-turn detail). A caller scoring a run in batches (one log file at
    a time) passes one *cache* and one *replays* to all of them."""
    cache = cache if cache is not None else EpisodeCache()
    replays = replays if replays is not None else Replays()
    out: list[EpisodeScore] = []
    with paused_gc():
        for record in records:
            try:
                episode = cache.get(record.spec)
            except SpecError:
                out.append(score_episode(record))  # reported as unscorable
                continue
            out.append(score_episode(record, episode, detail=detail, replays=replays))
    return out


def rescore(
    records: Iterable[EpisodeRecord],
    cache: EpisodeCache | None = None,
    *,
    family: str = DEFAULT_FAMILY,
) -> list[ResultLine]:
    """The cell and contrast lines of a set of records (Holm within each ``family``,
    :mod:`scoring.results.families`), then one helpers line per gate cell (compile accuracy,
    matcher agreement); all ``final``."""
    records = list(records)
    with paused_gc():
        lines = flag_inert(
            [*score_lines(score_records(records, cache), family), *helper_lines(records)]
        )
    return with_status(lines, "final")
