"""Offline rescoring on every core: log files scored in worker processes, merged exactly.

``ladder score`` and ``ladder report`` read every episode log and score every record against
its regenerated episode; on a large run that is CPU work that splits cleanly. The log files
are grouped by configuration (a cell's file name starts with its configuration, so the arms
of one seed, which share one regenerated episode, go to the same worker; the smallest
configuration, scored last, one arm's files a group, so the workers finish together), each
group is read and scored in a worker process (:mod:`runner.rundir.rescore_part`:
:func:`scoring.results.offline.score_records`, the helper lines per cell), and the parent
puts the pieces back in the serial reading order: the same records, the same scores in the
same order, the same report of bad lines, the same lines. With one process (``jobs=1``, or
one core) the configurations are scored in this process one at a time, one file's
records in memory at a time, not the run's (#50: the serial path
held every record of a 14,040-episode run at once, 1.05 GB, and freed them at the end).
Where the split could change a result (a (cell, seed) or a cell in two files of different
groups), or there is one group, or the logs are small, the serial path runs instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import msgspec

from protocol.records import CellKey, Knobs
from runner.grid.packs import loaded_texts
from runner.rundir.logs import LogReport, NewerSchemaError, log_files, read_logs
from runner.rundir.plots import preload_plots
from runner.rundir.rescore_part import Key, Part, config_of, score_group, start_worker
from scoring.analyses.base import Analyses
from scoring.analyses.registry import (
    ANALYSES,
    finished_analyses,
    mergeable,
    scored_once,
    stress_free,
)
from scoring.analyses.truncation import Cut, cut_replies
from scoring.gc_pause import paused_gc
from scoring.results.cells import cell_sort_key
from scoring.results.families import DEFAULT_FAMILY, score_lines
from scoring.results.gate_report import flag_inert
from scoring.results.lines import ResultLine, with_status
from scoring.results.offline import rescore

__all__ = ["MIN_PARALLEL_BYTES", "Scored", "config_groups", "cores", "rescore_dir", "scored_dir"]

MIN_PARALLEL_BYTES = 8 << 20  # below this, starting workers costs more than it saves


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Scored:
    """All ``ladder report`` shows of a run's records, from one scoring pass: the cell,
    contrast and helper lines, every analysis, the replies cut per cell."""

    lines: list[ResultLine]
    analyses: Analyses
    cuts: dict[CellKey, Cut]


def config_groups(paths: list[Path], *, across_models: bool = False) -> list[list[str]]:
    """Files by configuration (the arms of one seed share one regenerated episode), the
    biggest group first (so a pool's tail is short). ``across_models``: the models of a
    configuration in one group too (their seeds share the episode as well)."""
    by_config: dict[str, list[str]] = {}
    for p in paths:
        by_config.setdefault(config_of(p, across_models), []).append(str(p))
    return sorted(by_config.values(), key=_size)


def _worker_groups(paths: list[Path], jobs: int) -> list[list[str]]:
    """The groups the workers score: a configuration's files of every model in one, so
    each episode is regenerated once in the whole run, not once per model (#50), where
    no such group holds more than a worker's share; else one model's files each."""
    groups = config_groups(paths, across_models=True)
    sizes = [-_size(g) for g in groups]
    if len(groups) >= jobs and max(sizes, default=0) * jobs <= sum(sizes):
        return _balanced(groups, jobs)
    return config_groups(paths)


def _balanced(groups: list[list[str]], jobs: int) -> list[list[str]]:
    """``groups`` (biggest first) with the smallest configurations split so the workers
    finish together: five like configurations on two workers are no longer three rounds
    for one worker and two for the other (0.6 of the work on one: the two-core run at 0.6
    of one core's at best). The smallest of all, scored last, one arm's files a group
    (:func:`_by_arm`): whichever worker is free takes the next, so the workers end at most
    one file apart, not a group (#50, sixth round); a worker regenerates its episodes once
    for all it takes of it (:mod:`runner.rundir.rescore_part`), so each worker that takes
    some, at most ``jobs``, regenerates them. The next ``len(groups) % jobs - 1`` smallest
    split by model (their episodes regenerated once per model, #50)."""
    if not groups:
        return groups
    left = max(len(groups) % jobs, 1)
    split = config_groups([Path(p) for g in groups[-left:-1] for p in g])
    return sorted(groups[:-left] + split, key=_size) + _by_arm(groups[-1])


def _size(group: list[str]) -> int:
    return -sum(os.path.getsize(p) for p in group)


def _by_arm(group: list[str]) -> list[list[str]]:
    """A group's files by model and arm, the biggest first: one cell's files (of one name,
    in several folders) together, and a cell's stressed variants (the same name but for
    its knobs) with it, so a worker's report parts of the plain cell keep what the stressed
    ones read (:func:`_unread`: else the report scores serially)."""
    by_arm: dict[str, list[str]] = {}
    for p in group:
        by_arm.setdefault("__".join(Path(p).stem.split("__")[:7]), []).append(p)
    return sorted(by_arm.values(), key=_size)


def _merge(
    paths: list[Path], parts: list[Part], report: LogReport, family: str = DEFAULT_FAMILY
) -> tuple[list[ResultLine], list[Key]] | None:
    """The lines of the workers' parts and every key in the serial reading order; None
    where the split could change a result (the serial path decides)."""
    files = {p: f for part in parts for p, f in part.files.items()}
    seen: set[Key] = set()
    order: list[Key] = []
    for p in map(str, paths):
        f = files.get(p)
        if f is None:  # a group stopped at a newer-schema file before this one
            continue
        report.add(f.report)
        if f.error is not None:
            raise NewerSchemaError(f.error)
        if seen.intersection(f.keys):
            return None  # a (cell, seed) in two files: the serial rule decides which wins
        seen.update(f.keys)
        order += f.keys
    cells = [c for part in parts for c in part.cells]
    if len(cells) != len(set(cells)):
        return None  # one cell's records in two groups: its helper line needs them together
    scores = {k: s for part in parts for k, s in part.scores.items()}
    helpers = sorted((h for part in parts for h in part.helpers), key=lambda h: cell_sort_key(h[0]))
    with paused_gc():
        lines = score_lines((scores[k] for k in order), family) + [line for _, line in helpers]
        lines = flag_inert(lines)
    return with_status(lines, "final"), order  # as scoring.results.offline.rescore marks them


def _nothing() -> None:
    pass


def _parallel(
    paths: list[Path], jobs: int, min_bytes: int, detail: bool, also: Callable[[], None] = _nothing
) -> list[Part] | None:
    """Every group of log files scored in a worker process (one process: in this one, a
    group at a time); None where there is one group or the logs are too small to pay."""
    jobs = cores() if jobs <= 0 else jobs
    one = jobs <= 1  # one process: each configuration once, at once
    groups = config_groups(paths, across_models=True) if one else _worker_groups(paths, jobs)
    big = sum(p.stat().st_size for p in paths) >= min_bytes
    if len(groups) <= 1 or not big:
        return None
    if one:  # the workers' path here (#50): one group's records in memory, not the run's
        parts = [score_group(group, detail) for group in groups]
        also()
        return parts
    # the workers regenerate with the packs this process loaded (spawned ones too)
    with ProcessPoolExecutor(
        min(jobs, len(groups)), initializer=start_worker, initargs=(loaded_texts(),)
    ) as pool:
        pending = pool.map(partial(score_group, detail=detail), groups)
        also()  # while the workers score: what the caller needs next (a report: matplotlib)
        return list(pending)


def rescore_dir(
    run_dir: Path,
    report: LogReport,
    *,
    jobs: int = 0,
    min_bytes: int = MIN_PARALLEL_BYTES,
    family: str = DEFAULT_FAMILY,
) -> tuple[list[ResultLine], int]:
    """The cell, contrast and helper lines of every log under ``run_dir`` and the number of
    records scored, as :func:`scoring.results.offline.rescore` over :func:`runner.rundir.logs.read_logs`
    gives them; ``jobs`` worker processes (0: every core; 1: this process only, the
    workers' groups one at a time)."""
    paths = log_files(run_dir)
    parts = _parallel(paths, jobs, min_bytes, detail=False)
    if parts is not None:
        trial = LogReport()
        merged = _merge(paths, parts, trial, family)
        if merged is not None:
            report.add(trial)
            return merged[0], sum(len(p.scores) for p in parts)
    with paused_gc():  # one pause for reading and scoring, the records dropped inside it
        records = read_logs(run_dir, report)
        n = len(records)
        lines = rescore(records.values(), family=family) if records else []
        del records
    return lines, n


def _unread(parts: list[Part], cells: list[CellKey]) -> bool:
    """Whether no stressed cell of the run shares all but its knobs with a cell whose
    stress-only parts a worker left out (the serial path computes them all)."""
    skipped = {_bare(c) for part in parts for c in part.skipped}
    return not skipped or not any(_bare(c) in skipped for c in cells if not stress_free(c))


def _bare(cell: CellKey) -> CellKey:
    return msgspec.structs.replace(cell, knobs=Knobs())


def scored_dir(
    run_dir: Path,
    report: LogReport,
    *,
    jobs: int = 0,
    min_bytes: int = MIN_PARALLEL_BYTES,
    family: str = DEFAULT_FAMILY,
    figures: bool = False,
) -> tuple[Scored, int]:
    """``ladder report``'s one scoring pass (per-turn detail) over every log under
    ``run_dir``, on ``ladder score``'s workers: the lines, every analysis (each cell's
    parts computed in its worker, finished here in the serial order) and the cut replies,
    as :func:`scoring.analyses.registry.scored_once` and
    :func:`scoring.analyses.truncation.cut_replies` give them over
    :func:`runner.rundir.logs.read_logs`; and the number of records scored. ``figures``
    (the report draws them next): matplotlib imported here while the workers score."""
    paths = log_files(run_dir)
    also = preload_plots if figures else _nothing
    parts = _parallel(paths, jobs, min_bytes, True, also) if mergeable() else None
    if parts is not None:
        trial = LogReport()
        merged = _merge(paths, parts, trial, family)
        names = [t.name for t in ANALYSES.entries()]
        details = [d for part in parts for d in part.detail]
        # a worker that does not know this process's analyses (one registered at run time,
        # a spawned worker), or a stressed cell that reads parts a worker left out: the
        # serial path
        if (
            merged is not None
            and all(list(d[2]) == names for d in details)
            and _unread(parts, [d[1] for d in details])
        ):
            lines, order = merged
            at = {k: i for i, k in enumerate(order)}
            details.sort(key=lambda d: at[d[0]])
            report.add(trial)
            analyses = finished_analyses(d[2] for d in details)
            cuts = {d[1]: d[3] for d in details}
            return Scored(lines, analyses, cuts), sum(len(p.scores) for p in parts)
    with paused_gc():  # one pause for reading and scoring, the records dropped inside it
        records = list(read_logs(run_dir, report).values())
        n = len(records)
        lines, analyses = scored_once(records, family=family) if records else ([], Analyses())
        cuts = cut_replies(records)
        del records
    return Scored(lines, analyses, cuts), n
