"""Offline rescoring: every record of a run, scored with one episode cache (under
:func:`scoring.gc_pause.paused_gc` where the caller reads many records)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from protocol.episode.versions import SpecError
from protocol.records import EpisodeRecord
from scoring.gc_pause import paused_gc
from scoring.replay.episode_score import EpisodeScore, Replays, score_episode
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.compact import Shared
from scoring.results.families import DEFAULT_FAMILY, score_lines
from scoring.results.gate_report import flag_inert, helper_lines
from scoring.results.lines import ResultLine, with_status

__all__ = ["rescore", "score_one", "score_records"]


def score_records(
    records: Iterable[EpisodeRecord],
    cache: EpisodeCache | None = None,
    *,
    detail: bool = False,
    replays: Replays | None = None,
) -> list[EpisodeScore]:
    """One :class:`EpisodeScore` per record, regenerating each spec's episode once and
    replaying each (episode, turns, executions) once (compact scores unless *detail*:
    aggregation needs no per-turn detail; their parts shared, :class:`Shared`, so a run's
    final rescore keeps a few hundred bytes per record, #47). A caller scoring a run in
    batches (one log file at a time) passes one *cache* and one *replays* to all of them."""
    cache = cache if cache is not None else EpisodeCache()
    replays = replays if replays is not None else Replays()
    shared = Shared()  # a score with detail is left as it is
    with paused_gc():
        return [score_one(r, cache, replays, shared, detail=detail) for r in records]


def score_one(
    record: EpisodeRecord,
    cache: EpisodeCache,
    replays: Replays,
    shared: Shared,
    *,
    detail: bool = False,
) -> EpisodeScore:
    """One record's score as :func:`score_records` gives it (its episode from *cache*, its
    replays shared through *replays*, its parts through *shared*): for a caller that scores
    each record as it is read and drops it (#50, ``runner.rundir.rescore_part``)."""
    try:
        episode = cache.get(record.spec)
    except SpecError:
        return shared(score_episode(record))  # reported as unscorable
    return shared(score_episode(record, episode, detail=detail, replays=replays))


def rescore(
    records: Iterable[EpisodeRecord],
    cache: EpisodeCache | None = None,
    *,
    family: str = DEFAULT_FAMILY,
    helpers: Callable[[EpisodeRecord], bool] | None = None,
    replays: Replays | None = None,
) -> list[ResultLine]:
    """The cell and contrast lines of a set of records (Holm within each ``family``,
    :mod:`scoring.results.families`), then one helpers line per gate cell (compile accuracy,
    matcher agreement); all ``final``. ``helpers``: the records the helpers lines need
    (every completed record of a cell that can have one); given, ``records`` is walked once
    and only those are kept (a run's end streams its logs, #47); None lists them all.
    ``cache`` and ``replays``: :func:`score_records`'."""
    kept: list[EpisodeRecord] = []
    if helpers is None:
        records = kept = list(records)
    else:
        records = _keeping(records, helpers, kept)
    with paused_gc():
        scores = score_records(records, cache, replays=replays)
        lines = flag_inert([*score_lines(scores, family), *helper_lines(kept)])
    return with_status(lines, "final")


def _keeping(
    records: Iterable[EpisodeRecord],
    keep: Callable[[EpisodeRecord], bool],
    kept: list[EpisodeRecord],
) -> Iterator[EpisodeRecord]:
    for record in records:
        if keep(record):
            kept.append(record)
        yield record
