"""The viewer's index of a run directory: built once, cached in the run directory, grown as
the logs grow.

For every complete line of every cell log (:func:`runner.rundir.logs.scan_log`) the index keeps the
byte offset and length of the line, the episode's compact score
(:func:`scoring.replay.episode_score.score_episode` with ``detail=False``), its list row
(:class:`scoring.display.models.RowView`, from :func:`scoring.display.episode_views.episode_row`) and its
one-episode cost row
(:func:`scoring.analyses.cost.cost_rows`). An episode is read again from its offset only when it is
opened (:meth:`RunIndex.record`).

Cache: ``DIR/view-index.msgpack``, one file, with the run's result lines
(:func:`scoring.results.families.score_lines` of the indexed scores) once computed. For each log file it
holds the offset after its
last indexed line and the file's first bytes. On :meth:`RunIndex.refresh` a file that grew
past that offset (a run in progress) is scanned from there on; a file whose first bytes
changed or that shrank is indexed again from the start; a file gone is dropped. A cache
written by another index version or schema version is ignored and rebuilt. A run directory
that cannot be written keeps the index in memory only.
"""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import msgspec

from protocol.episode.versions import SpecError
from protocol.records import SCHEMA_VERSION, CellKey, EpisodeRecord
from runner.files import MAX_LINE_BYTES, NotRegularFile, open_regular, read_regular, write_atomic
from runner.grid.packs import loaded_texts, register_texts
from runner.rundir.logs import (
    MAX_KEPT_PROBLEMS,
    LogReport,
    Problems,
    iter_log,
    log_files,
    read_record,
)
from runner.rundir.rescore import MIN_PARALLEL_BYTES, config_groups, cores
from scoring.analyses.cost import CostRow, cost_rows
from scoring.display.episode_views import episode_row
from scoring.display.models import RowView
from scoring.gc_pause import paused_gc
from scoring.replay.episode_score import EpisodeScore, Replays, score_episode
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.gate_report import gate_activity, merged_activity
from scoring.results.lines import GateActivity, ResultLine

__all__ = ["INDEX_FILE", "INDEX_VERSION", "Entry", "FileIndex", "RunIndex"]

INDEX_FILE = "view-index.msgpack"
INDEX_VERSION = 8  # 3: an entry's row is a RowView, the overview typed lines; 4: gate activity;
# 5: records of old scripted runs labelled from the manifest, entries by (seed, trial) (#40);
# 6: a row names its trial; 7: corrupt lines counted, the first 100 kept (#47); 8: a score
# and a cell line count the replies cut at their token budget (#49)
MAX_INDEX_BYTES = MAX_LINE_BYTES  # a cached index over this is ignored and rebuilt (#47)
_HEAD = 256  # bytes of a log's start kept to tell a replaced file from a grown one


class Entry(msgspec.Struct, kw_only=True):
    seed: int
    offset: int
    length: int
    score: EpisodeScore
    row: RowView
    cost: CostRow | None  # None: not completed (cost counts completed episodes)
    gate: GateActivity | None = None  # a completed gate episode's (None: no gate, not completed)
    trial: int = 0  # which trial of its seed (--trials, #40)


class FileIndex(msgspec.Struct, kw_only=True):
    indexed_to: int = 0
    head: bytes = b""
    # "<seed>" (trial 0) or "<seed>/t<k>" (trial k, --trials) -> its last record in this file
    entries: dict[str, Entry] = {}
    records: int = 0
    duplicates: int = 0
    corrupt: list[str] = []  # the first MAX_KEPT_PROBLEMS (#47)
    corrupt_count: int = 0  # every corrupt line


class _Cache(msgspec.Struct, kw_only=True):
    version: int
    schema: int
    files: dict[str, FileIndex]
    overview: list[ResultLine] | None = None


def _size_and_head(path: Path) -> tuple[int, bytes]:
    """A log's size and first bytes, read from a regular file only: a planted FIFO, link or
    device is :class:`NotRegularFile` (refused naming it, never blocked on; #47)."""
    fd = open_regular(path)
    try:
        return os.fstat(fd).st_size, os.pread(fd, _HEAD, 0)
    finally:
        os.close(fd)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _gate(record: EpisodeRecord) -> GateActivity | None:
    """A completed gate episode's gate activity (what the overview's inert mark merges)."""
    gated = record.compile is not None or any(t.matcher_outcome for t in record.turns)
    if record.termination != "completed" or not gated:
        return None
    return gate_activity([record])


def _score(record: EpisodeRecord, episodes: EpisodeCache, replays: Replays) -> EpisodeScore:
    try:
        episode = episodes.get(record.spec)
    except SpecError:
        return score_episode(record, detail=False)  # reported as unscorable
    return score_episode(record, episode, detail=False, replays=replays)


def index_file(
    path: Path, old: FileIndex | None, episodes: EpisodeCache, replays: Replays
) -> tuple[FileIndex, int]:
    """``path``'s index grown from ``old`` (from the start when it is new, shrunk or
    replaced) and the records it scored."""
    size, head = _size_and_head(path)
    if old is None or size < old.indexed_to or head[: len(old.head)] != old.head:
        old = FileIndex()  # new, shrunk or replaced: index from the start
    elif size == old.indexed_to:
        return old, 0
    fi = old
    end = fi.indexed_to
    scanned = 0
    for line, after in iter_log(path, fi.indexed_to):  # a line at a time (#47)
        end = after
        if line is None:
            continue
        if line.record is None:
            fi.corrupt_count += 1
            if len(fi.corrupt) < MAX_KEPT_PROBLEMS:
                fi.corrupt.append(line.error or f"{path.name}@{line.offset}")
            continue
        rec = line.record
        score = _score(rec, episodes, replays)
        costs = cost_rows([rec])
        cost = costs[0] if costs else None
        key = f"{rec.spec.seed}" + (f"/t{rec.trial}" if rec.trial else "")
        if key in fi.entries:
            fi.duplicates += 1
        fi.entries[key] = Entry(
            seed=rec.spec.seed,
            offset=line.offset,
            length=line.length,
            score=score,
            row=episode_row(rec, score, cost),
            cost=cost,
            gate=_gate(rec),
            trial=rec.trial,
        )
        fi.records += 1
        scanned += 1
    fi.indexed_to = end
    fi.head = head
    return fi, scanned


_Done = tuple[str, FileIndex | str | None, int]  # name, index (str: refused; None: unreadable)


def _index_group(items: list[tuple[str, str, FileIndex | None]]) -> list[_Done]:
    """A worker's share of a refresh: one configuration's files (one episode cache for
    their arms), each (name, its index, records scored); a file refused as not regular
    comes back as its message (raised in the parent), one unreadable since listed as None."""
    episodes, replays = EpisodeCache(), Replays()
    out: list[_Done] = []
    with paused_gc():
        for name, path, old in items:
            try:
                fi, n = index_file(Path(path), old, episodes, replays)
            except NotRegularFile as e:
                out.append((name, str(e), 0))
                break
            except OSError:
                out.append((name, None, 0))  # removed or unreadable since listed
                continue
            out.append((name, fi, n))
    return out


class RunIndex:
    """Every episode of a run directory, by cell slug and seed, with its score and offset."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.path = run_dir / INDEX_FILE
        self.overview: list[ResultLine] | None = None  # lines cached by set_overview
        self.files: dict[str, FileIndex] = self._load()
        self.episodes = EpisodeCache()
        self.scanned = 0  # records scored by the last refresh (0: all from the cache)
        # slug -> (seed, trial) -> where the record lies and its entry
        self._by_slug: dict[str, dict[tuple[int, int], tuple[Path, Entry]]] = {}

    # --- the cache file ---------------------------------------------------------------
    def _load(self) -> dict[str, FileIndex]:
        try:
            # a regular file, never through a link, bounded (#47); anything else: rebuilt
            data = read_regular(self.path, cap=MAX_INDEX_BYTES, follow=False)
            cache = msgspec.msgpack.decode(data, type=_Cache)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            return {}
        if cache.version != INDEX_VERSION or cache.schema != SCHEMA_VERSION:
            return {}
        self.overview = cache.overview
        return cache.files

    def _save(self) -> None:
        data = msgspec.msgpack.encode(
            _Cache(
                version=INDEX_VERSION,
                schema=SCHEMA_VERSION,
                files=self.files,
                overview=self.overview,
            )
        )
        with contextlib.suppress(OSError):  # a read-only run directory: the index in memory
            write_atomic(self.path, data)  # mkstemp + rename: never through a planted link

    # --- building -----------------------------------------------------------------------
    def refresh(self) -> bool:
        """Index what the logs gained since the last refresh; True when anything changed."""
        self.scanned = 0
        base = self.run_dir
        paths = {str(p.relative_to(base)): p for p in log_files(base)}
        changed = set(self.files) != set(paths)
        # before indexing: one process grows the cached indexes in place
        before = {name: (fi.indexed_to, fi.records) for name, fi in self.files.items()}
        files = self._indexed(paths)
        for name, fi in files.items():
            changed |= before.get(name) != (fi.indexed_to, fi.records)
        self.files = files
        self._by_slug = {}
        for name in sorted(files):
            for entry in files[name].entries.values():
                slug = entry.row.slug
                unit = (entry.seed, entry.trial)
                self._by_slug.setdefault(slug, {})[unit] = (paths[name], entry)
        if changed:
            self.overview = None
            self._save()
        return changed

    def _indexed(self, paths: dict[str, Path]) -> dict[str, FileIndex]:
        """Every log's index grown from the cached one (a file unreadable since listed is
        left out), on every core when the logs to read are large (``ladder score``'s
        grouping: one configuration's files to a worker); ``scanned`` counts the records."""
        todo = [(name, str(p), self.files.get(name)) for name, p in paths.items()]
        grown = sum(max(0, _size(paths[n]) - (o.indexed_to if o else 0)) for n, _, o in todo)
        jobs = cores()
        if jobs > 1 and grown >= MIN_PARALLEL_BYTES:
            where = {path: (name, path, old) for name, path, old in todo}
            try:
                groups = [[where[p] for p in g] for g in config_groups(list(paths.values()))]
            except OSError:  # a log removed since listed: the one-process path skips it
                groups = []
            if len(groups) > 1:
                with ProcessPoolExecutor(
                    min(jobs, len(groups)), initializer=register_texts, initargs=(loaded_texts(),)
                ) as pool:
                    done = [x for part in pool.map(_index_group, groups) for x in part]
                return self._kept(paths, done)
        # one process: the cached indexes grown in place, one episode cache for the run
        replays = Replays()  # for this refresh: the arms of one seed share identical replays
        out: list[_Done] = []
        with paused_gc():
            for name, path, old in todo:
                try:
                    fi, n = index_file(Path(path), old, self.episodes, replays)
                except NotRegularFile:
                    raise  # a planted link or FIFO: refused naming it, as `score` does
                except OSError:
                    continue  # removed or unreadable since listed
                out.append((name, fi, n))
        return self._kept(paths, out)

    def _kept(self, paths: dict[str, Path], done: list[_Done]) -> dict[str, FileIndex]:
        """The indexes in the listing's order, and ``scanned`` counted; a file refused in a
        worker is refused here (:class:`NotRegularFile`, naming it)."""
        got = {name: (fi, n) for name, fi, n in done}
        files: dict[str, FileIndex] = {}
        for name in paths:
            fi, n = got.get(name, (None, 0))
            if isinstance(fi, str):
                raise NotRegularFile(fi)
            if fi is not None:
                files[name] = fi
                self.scanned += n
        return files

    def set_overview(self, lines: list[ResultLine]) -> None:
        """Keep the result lines of the indexed scores with the index (cleared, and so
        computed again, when the logs change)."""
        self.overview = lines
        self._save()

    # --- reading ------------------------------------------------------------------------
    def slugs(self) -> list[str]:
        return sorted(self._by_slug)

    def entries(self, slug: str) -> list[Entry]:
        """The cell's episodes in seed order, each seed's trials in trial order (empty for an
        unknown slug)."""
        cell = self._by_slug.get(slug, {})
        return [cell[u][1] for u in sorted(cell)]

    def entry(self, slug: str, seed: int, trial: int = 0) -> Entry | None:
        hit = self._by_slug.get(slug, {}).get((seed, trial))
        return hit[1] if hit else None

    def scores(self) -> list[EpisodeScore]:
        return [e.score for cell in self._by_slug.values() for _, e in cell.values()]

    def costs(self) -> dict[str, list[CostRow]]:
        return {
            slug: [e.cost for _, e in cell.values() if e.cost is not None]
            for slug, cell in self._by_slug.items()
        }

    def gates(self) -> dict[str, GateActivity]:
        """Each gate cell's activity, merged over its completed episodes (by slug)."""
        out: dict[str, GateActivity] = {}
        for slug, cell in self._by_slug.items():
            parts = [e.gate for _, e in cell.values() if e.gate is not None]
            if parts:
                out[slug] = merged_activity(parts)
        return out

    def cell_key(self, slug: str) -> CellKey | None:
        cell = self._by_slug.get(slug)
        return next(iter(cell.values()))[1].score.cell if cell else None

    def record(self, slug: str, seed: int, trial: int = 0) -> EpisodeRecord | None:
        """The episode's record, read from its offset (None when not indexed)."""
        hit = self._by_slug.get(slug, {}).get((seed, trial))
        if hit is None:
            return None
        path, entry = hit
        return read_record(path, entry.offset, entry.length)

    def report(self) -> LogReport:
        """What reading found, in :class:`runner.rundir.logs.LogReport`'s terms (the last partial
        line of a file is not counted: it may be an episode being written)."""
        rep = LogReport(files=len(self.files))
        for fi in self.files.values():
            rep.records += fi.records
            rep.duplicates += fi.duplicates
            rep.corrupt.extend(Problems(fi.corrupt))
            rep.corrupt.count += fi.corrupt_count - len(fi.corrupt)
        return rep
