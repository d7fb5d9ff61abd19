"""Offline rescoring on every core: log files scored in worker processes, merged exactly.

``ladder score`` and ``ladder report`` read every episode log and score every record against
its regenerated episode; on a large run that is CPU work that splits cleanly. The log files
are grouped by configuration (a cell's file name starts with its configuration, so the arms
of one seed, which share one regenerated episode, go to the same worker), each group is read
and scored in a worker process (:func:`scoring.results.offline.score_records`, the helper lines per
cell), and the parent puts the pieces back in the serial reading order: the same records,
the same scores in the same order, the same report of bad lines, the same lines. Where the
split could change a result (a (cell, seed) or a cell in two files of different groups), or
the logs are small, or one core is all there is, the serial path runs instead.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from protocol.records import CellKey, EpisodeRecord
from runner.grid.packs import loaded_texts, register_texts
from runner.rundir.logs import LogReport, NewerSchemaError, log_files, read_log_file, read_logs
from scoring.gc_pause import paused_gc
from scoring.replay.episode_score import EpisodeScore
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import cell_sort_key
from scoring.results.families import DEFAULT_FAMILY, score_lines
from scoring.results.gate_report import flag_inert, helper_lines
from scoring.results.lines import HelperLine, ResultLine, with_status
from scoring.results.offline import rescore, score_records
from scoring.results.stats import preload_stats

__all__ = ["MIN_PARALLEL_BYTES", "cores", "rescore_dir"]

MIN_PARALLEL_BYTES = 8 << 20  # below this, starting workers costs more than it saves
Key = tuple[str, int]


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@dataclass
class _File:
    report: LogReport
    keys: list[Key]
    error: str | None = None  # a NewerSchemaError's message


@dataclass
class _Part:
    files: dict[str, _File]
    scores: dict[Key, EpisodeScore]
    helpers: list[tuple[CellKey, HelperLine]]
    cells: set[str]


def _score_group(paths: Sequence[str]) -> _Part:
    files: dict[str, _File] = {}
    records: dict[Key, EpisodeRecord] = {}
    with paused_gc():
        for p in paths:
            out: dict[Key, EpisodeRecord] = {}
            report = LogReport()
            try:
                read_log_file(Path(p), report, out)
            except NewerSchemaError as e:
                files[p] = _File(report, [], str(e))
                break
            files[p] = _File(report, list(out))
            records.update(out)
        scores = dict(zip(records, score_records(records.values(), EpisodeCache()), strict=True))
        by_cell: dict[CellKey, list[EpisodeRecord]] = {}
        for r in records.values():
            by_cell.setdefault(r.cell, []).append(r)
        helpers = [(c, line) for c, recs in by_cell.items() for line in helper_lines(recs)]
        cells = {c.slug() for c in by_cell}
        # Drop the records while the collector is still paused: alive when it resumes, its
        # first pass would walk every object they hold.
        del records, by_cell, out
    return _Part(files, scores, helpers, cells)


def _config(path: Path) -> str:
    """A log file's configuration: its cell slug without the arm and knobs."""
    parts = path.stem.split("__")
    return "__".join(parts[:6]) if len(parts) >= 7 else path.stem


def _groups(paths: list[Path]) -> list[list[str]]:
    """Files by configuration, the biggest group first (so the pool's tail is short)."""
    by_config: dict[str, list[str]] = {}
    for p in paths:
        by_config.setdefault(_config(p), []).append(str(p))
    return sorted(by_config.values(), key=lambda g: -sum(os.path.getsize(p) for p in g))


def _merge(
    paths: list[Path], parts: list[_Part], report: LogReport, family: str = DEFAULT_FAMILY
) -> list[ResultLine] | None:
    files = {p: f for part in parts for p, f in part.files.items()}
    seen: set[Key] = set()
    order: list[Key] = []
    for p in map(str, paths):
        f = files.get(p)
        if f is None:  # a group stopped at a newer-schema file before this one
            continue
        report.files += 1
        report.records += f.report.records
        report.duplicates += f.report.duplicates
        report.corrupt += f.report.corrupt
        report.truncated += f.report.truncated
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
    return with_status(lines, "final")  # as scoring.results.offline.rescore marks them


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
    gives them; ``jobs`` worker processes (0: every core; 1: this process only)."""
    paths = log_files(run_dir)
    jobs = cores() if jobs <= 0 else jobs
    groups = _groups(paths)
    big = sum(p.stat().st_size for p in paths) >= min_bytes
    if jobs > 1 and len(groups) > 1 and big:
        workers = min(jobs, len(groups))
        # the workers regenerate with the packs this process loaded (spawned ones too)
        with ProcessPoolExecutor(
            workers, initializer=register_texts, initargs=(loaded_texts(),)
        ) as pool:
            pending = pool.map(_score_group, groups)
            preload_stats()  # while the workers score: the merge needs scipy
            parts = list(pending)
        trial = LogReport()
        lines = _merge(paths, parts, trial, family)
        if lines is not None:
            for name in ("files", "records", "duplicates"):
                setattr(report, name, getattr(report, name) + getattr(trial, name))
            report.corrupt += trial.corrupt
            report.truncated += trial.truncated
            return lines, sum(len(p.scores) for p in parts)
    with paused_gc():  # one pause for reading and scoring, the records dropped inside it
        records = read_logs(run_dir, report)
        n = len(records)
        lines = rescore(records.values(), family=family) if records else []
        del records
    return lines, n
