"""One worker's part of an offline rescore (:mod:`runner.rundir.rescore`): a group of log files
read and scored, sent back to the parent to be merged.

A group's files are read and scored one cell's files at a time (:func:`_score_files`), so
a worker holds one file's records, not its group's: a worker's heap stays small and its
first group no longer faults in a quarter of a gigabyte (#50, sixth round, ``ladder score``:
110,000 page faults of two workers, 0.45 s of system CPU, down to 17,000). With per-turn
detail (``ladder report``, seventh round) the same way: each cell's analyses' parts are
computed from its own files' records (a part is one cell's), and its scores sent back
compact (two workers' faults 176,000 -> 27,000, their system CPU 0.6-0.9 s -> 0.2-0.3 s).
Without detail (``ladder score``, ninth round) not even a file's: each record is scored as
it is read and dropped before the next line is decoded (:func:`_streamed`), its helpers
line's share kept as counts, so the next record is made in memory still in the processor's
cache (the one-core path's CPU -24% on the bench log). With detail the same way where every
report table declares a :class:`~scoring.analyses.base.Fold` (tenth round): each record is
scored with per-turn detail, folded into the tables' values
(:class:`runner.rundir.report_fold.Folded`) and dropped, its score kept compact. The
episodes and replays a configuration's records share are kept per worker
(:func:`start_worker`) for as long as its groups are of one configuration, so a
configuration whose files are scored as several small groups by one worker (the run's
tail: ``runner.rundir.rescore._balanced``) regenerates its episodes once in that worker.
Each score is a pure function of its record and its regenerated episode: no score
depends on the grouping, the order or the worker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from protocol.records import CellKey, EpisodeRecord, log_key
from runner.grid.packs import register_texts
from runner.rundir.logs import Found, LogReport, NewerSchemaError, read_file
from runner.rundir.report_fold import Folded
from scoring.analyses.registry import STRESS_ONLY, Parts, batch_parts, stress_free
from scoring.analyses.truncation import Cut, add_cuts
from scoring.gc_pause import paused_gc
from scoring.replay.episode_score import EpisodeScore, Replays
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.compact import Shared
from scoring.results.gate_report import helper_lines
from scoring.results.helper_tally import HelperTally
from scoring.results.lines import HelperLine
from scoring.results.offline import score_one, score_records

__all__ = ["File", "Key", "Part", "config_of", "score_group", "start_worker"]

Key = tuple[str, int]


@dataclass
class File:
    report: LogReport
    keys: list[Key]
    error: str | None = None  # a NewerSchemaError's message


@dataclass
class Part:
    files: dict[str, File]
    scores: dict[Key, EpisodeScore]
    helpers: list[tuple[CellKey, HelperLine]]
    cells: set[str]
    # with detail (``ladder report``): per cell, its first key, its analyses' parts and its
    # replies cut at their budget, in the group's reading order
    detail: list[tuple[Key, CellKey, Parts, Cut]] = field(default_factory=list)
    skipped: list[CellKey] = field(default_factory=list)  # stress-only parts left out


def config_of(path: Path, across_models: bool = False) -> str:
    """A log file's configuration: its cell slug without the arm and knobs (and, across
    models, without the model and its regime)."""
    parts = path.stem.split("__")
    return "__".join(parts[2 if across_models else 0 : 6]) if len(parts) >= 7 else path.stem


@dataclass
class _Kept:
    """A worker's episodes and replays of the configuration it last scored."""

    config: str = ""
    cache: EpisodeCache = field(default_factory=EpisodeCache)
    replays: Replays = field(default_factory=Replays)


_KEPT: list[_Kept] = []  # one, in a worker process (start_worker); none elsewhere


def start_worker(texts: dict[str, str]) -> None:
    """A worker's initializer: the packs the parent loaded, and a place for the episodes of
    the configuration it scores (kept from one group to the next of the same one)."""
    register_texts(texts)
    _KEPT[:] = [_Kept()]


def _regenerated(paths: Sequence[str]) -> tuple[EpisodeCache, Replays]:
    """The episodes and replays for a group: a worker's kept ones where the group is of the
    configuration it scored last (else new ones, kept in their place); new ones outside a
    worker (a caller's process keeps nothing once the call returns)."""
    configs = {config_of(Path(p), across_models=True) for p in paths}
    if not _KEPT or len(configs) != 1:
        return EpisodeCache(), Replays()
    (config,) = configs
    if _KEPT[0].config != config:
        _KEPT[0] = _Kept(config)
    return _KEPT[0].cache, _KEPT[0].replays


def score_group(paths: Sequence[str], detail: bool = False) -> Part:
    """One group's part: its files read and scored one cell's files at a time (with detail,
    each cell's analyses' parts too); where a cell's records turn up in files of two names,
    the group at once."""
    part = _score_files(paths, detail)
    return part if part is not None else _score_whole(paths, detail)


def _batches(paths: Sequence[str]) -> list[list[str]]:
    """The group's files by name (one cell's files together: a run's folders may each hold
    one), in the order of their first file."""
    by_name: dict[str, list[str]] = {}
    for p in paths:
        by_name.setdefault(Path(p).name, []).append(p)
    return list(by_name.values())


def _read(p: str, files: dict[str, File]) -> dict[Key, EpisodeRecord] | None:
    """The records of one file (the reading the viewer's index shares, logs.read_file),
    its report kept in *files*; None at a newer schema (the merge raises it)."""
    try:
        read = read_file(Path(p), log_key, value=Found)
    except NewerSchemaError as e:
        files[p] = File(LogReport(files=1), [], str(e))
        return None
    out = {k: f.record for k, f in read.found.items()}
    files[p] = File(read.report, list(out))
    return out


def _score_files(paths: Sequence[str], detail: bool = False) -> Part | None:
    """The group scored one batch of same-named files at a time (:func:`_batches`); None
    where a cell's records are in two batches (its helper line or its analyses' parts
    need them together). With detail, each batch's cells' analyses' parts as
    :func:`_score_whole` makes them of the group (a batch's cells are cells of the group:
    each part is one cell's), the scores sent back compact (#50, seventh round): folded
    record by record where every table is a fold (:func:`_streamed`), else of the batch."""
    part = Part({}, {}, [], set())
    cache, replays = _regenerated(paths)
    plain = _plain_names(paths)
    shared = Shared()
    with paused_gc():  # each batch's records dropped inside the pause (see _score_whole)
        for batch in _batches(paths):
            folded = Folded.start(cache, plain) if detail else None
            streamed = (
                None
                if detail and folded is None
                else _streamed(batch, part.files, cache, replays, folded)
            )
            if streamed is _STOPPED:
                return part
            records: dict[Key, EpisodeRecord] = {}
            details: tuple[list[tuple[Key, CellKey, Parts, Cut]], list[CellKey]] = ([], [])
            if streamed is None:  # a table not folded, or a key read twice: all at once
                for p in batch:
                    out = _read(p, part.files)
                    if out is None:
                        return part
                    records.update(out)
                    del out
                scored = dict(
                    zip(
                        records,
                        score_records(records.values(), cache, detail=detail, replays=replays),
                        strict=True,
                    )
                )
                batch_helpers, slugs = _cells(records)
                if detail:
                    details = _detail(records, scored, cache, plain)
                    scored = {k: shared(_compact(s)) for k, s in scored.items()}
            else:
                scored, tally = streamed
                batch_helpers, slugs = _tallied(tally)
                if folded is not None:
                    details = folded.detail()
            if not part.cells.isdisjoint(slugs):
                return None
            part.cells |= slugs
            part.helpers += batch_helpers
            part.detail += details[0]
            part.skipped += details[1]
            part.scores.update(scored)
            del records, scored, streamed
    return part


# a newer schema's file: the group stops there (the parent's merge raises it)
_STOPPED: tuple[dict[Key, EpisodeScore], HelperTally] = ({}, HelperTally())


def _streamed(
    batch: Sequence[str],
    files: dict[str, File],
    cache: EpisodeCache,
    replays: Replays,
    folded: Folded | None = None,
) -> tuple[dict[Key, EpisodeScore], HelperTally] | None:
    """The batch's scores and its helpers lines' counts, each record scored as it is read
    and dropped before the next line is decoded (:func:`runner.rundir.logs.read_file`'s
    ``value``): the next record is made in the memory the last one freed, still in the
    processor's cache, and no batch of records is kept to be freed cold (#50, ninth round).
    :data:`_STOPPED` at a newer schema's file (its report kept in ``files``, as
    :func:`_read` keeps it); None where a key turns up twice (a superseded record is in the
    counts) or the counts are not complete (:class:`HelperTally`): the caller reads the
    batch again, at once, as before. With ``folded`` (``ladder report``), each record is
    scored with per-turn detail, folded into the analyses' values
    (:class:`~runner.rundir.report_fold.Folded`) and its score kept compact; None also where
    ``folded`` cannot take the batch."""
    tally = HelperTally()
    shared = Shared()

    def scored(offset: int, length: int, record: EpisodeRecord) -> EpisodeScore:
        tally.add(record)
        if folded is None:
            return score_one(record, cache, replays, shared)
        score = score_one(record, cache, replays, shared, detail=True)
        folded.add(record, score)
        return shared(_compact(score))

    scores: dict[Key, EpisodeScore] = {}
    for p in batch:
        try:
            read = read_file(Path(p), log_key, value=scored)
        except NewerSchemaError as e:
            files[p] = File(LogReport(files=1), [], str(e))
            return _STOPPED
        if read.report.duplicates or not scores.keys().isdisjoint(read.found):
            return None
        files[p] = File(read.report, list(read.found))
        scores.update(read.found)
    if folded is not None and folded.spoiled:
        return None
    return (scores, tally) if tally.complete else None


def _plain_names(paths: Sequence[str]) -> bool:
    """Whether no file of the group is named for a cell with a knob set (a cell's slug
    names its set knobs as ``name=value``, :meth:`protocol.config.CellKey.slug`): then a
    batch of stress-free cells may leave its :data:`STRESS_ONLY` parts out, as the group's
    would (where a renamed file hides a stressed cell, the parent's check of what was left
    out, ``runner.rundir.rescore._unread``, sends the run to the serial path)."""
    return not any("=" in Path(p).name for p in paths)


def _cells(
    records: dict[Key, EpisodeRecord],
) -> tuple[list[tuple[CellKey, HelperLine]], set[str]]:
    """The helper lines of each cell of ``records`` (in reading order) and the cells' slugs."""
    by_cell: dict[CellKey, list[EpisodeRecord]] = {}
    for r in records.values():
        by_cell.setdefault(r.cell, []).append(r)
    helpers = [(c, line) for c, recs in by_cell.items() for line in helper_lines(recs)]
    return helpers, {c.slug() for c in by_cell}


def _tallied(tally: HelperTally) -> tuple[list[tuple[CellKey, HelperLine]], set[str]]:
    """:func:`_cells` of the records counted in ``tally``."""
    cells = tally.cells()
    return [(c, line) for c in cells for line in tally.lines(c)], {c.slug() for c in cells}


def _compact(score: EpisodeScore) -> EpisodeScore:
    """The score without its per-turn detail (what the lines read), cheap to send back."""
    return msgspec.structs.replace(
        score,
        primary=msgspec.structs.replace(score.primary, turns=()),
        decline_aware=msgspec.structs.replace(score.decline_aware, turns=()),
    )


def _detail(
    records: dict[Key, EpisodeRecord],
    scores: dict[Key, EpisodeScore],
    cache: EpisodeCache,
    plain: bool = True,
) -> tuple[list[tuple[Key, CellKey, Parts, Cut]], list[CellKey]]:
    """Per cell (in reading order): its first key, what each analysis makes of its pairs,
    its replies cut at their token budget (the sum of its scores' ``cut``, which
    :func:`scoring.analyses.truncation.cut_replies` counts from the records); and the cells
    whose :data:`~scoring.analyses.registry.STRESS_ONLY` parts were left out (where none
    of these cells is stressed and ``plain``, no file of their group named for a knob: the
    parent checks that no stressed cell elsewhere reads them)."""
    by_cell: dict[CellKey, list[Key]] = {}
    for k, r in records.items():
        by_cell.setdefault(r.cell, []).append(k)
    skipped = list(by_cell) if plain and all(map(stress_free, by_cell)) else []
    skip = STRESS_ONLY if skipped else frozenset()
    out = []
    for cell, keys in by_cell.items():
        pairs = [(records[k], scores[k]) for k in keys]
        cut = add_cuts(scores[k].cut for k in keys)
        out.append((keys[0], cell, batch_parts(pairs, cache, skip=skip), cut))
    return out, skipped


def _score_whole(paths: Sequence[str], detail: bool) -> Part:
    """The group's records read at once and scored (with detail: each cell's analyses'
    parts too, which need the group's records)."""
    files: dict[str, File] = {}
    records: dict[Key, EpisodeRecord] = {}
    cache, replays = _regenerated(paths)
    with paused_gc():
        for p in paths:
            out = _read(p, files)
            if out is None:
                break
            records.update(out)
        scored = score_records(records.values(), cache, detail=detail, replays=replays)
        scores = dict(zip(records, scored, strict=True))
        parts, skipped = _detail(records, scores, cache) if detail else ([], [])
        if detail:  # sent back as ``ladder score``'s workers send them: parts shared
            shared = Shared()
            scores = {k: shared(_compact(s)) for k, s in scores.items()}
        helpers, cells = _cells(records)
        # Drop the records while the collector is still paused: alive when it resumes, its
        # first pass would walk every object they hold.
        del records, scored
    return Part(files, scores, helpers, cells, parts, skipped)
