"""The viewer's index of a run directory: built once, cached in the run directory, grown as
the logs grow.

For every complete line of every cell log the index keeps the byte offset and length of the
line, the episode's compact score, its list row, its one-episode cost row and its gate activity
(:mod:`runner.viewer.entries`: read and scored as ``ladder score`` reads and scores, #50). An
episode is read again from its offset only when it is opened (:meth:`RunIndex.record`).

Cache: ``DIR/view-index.msgpack``, one file, with the run's result lines
(:func:`scoring.results.families.score_lines` of the indexed scores) once computed. For each log
file it holds the offset after its last indexed line and the file's first bytes. On
:meth:`RunIndex.refresh` a file that grew past that offset (a run in progress) is scanned from
there on; a file whose first bytes changed or that shrank is indexed again from the start; a
file gone is dropped. A cache written by another index version or schema version is ignored
and rebuilt. A run directory that cannot be written keeps the index in memory only.

Large refreshes (:data:`runner.rundir.rescore.MIN_PARALLEL_BYTES` of logs to read) run on
worker processes, one configuration's files to a worker in a row (``ladder score``'s
grouping), each file's index coming back as soon as it is done. ``refresh(wait=False)`` (the
viewer's pages) runs such a refresh in a thread of its own: what is indexed so far is readable
at once (:meth:`RunIndex.progress` says how far it got), the index the same when it is done as
one built in one go.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

import msgspec

from protocol.records import SCHEMA_VERSION, CellKey, EpisodeRecord
from runner.files import MAX_LINE_BYTES, NotRegularFile, read_regular, write_atomic
from runner.rundir.logs import LogReport, Problems, log_files, read_record
from runner.rundir.rescore import MIN_PARALLEL_BYTES, cores
from runner.viewer.build import Build, Todo
from runner.viewer.entries import Entry, FileIndex, index_file, size_and_head
from scoring.display.episode_facts import facts_cell_cost
from scoring.display.models import CellCost
from scoring.gc_pause import paused_gc
from scoring.replay.episode_score import EpisodeScore, Replays
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.gate_report import merged_activity
from scoring.results.lines import GateActivity, ResultLine

__all__ = ["INDEX_FILE", "INDEX_VERSION", "Entry", "FileIndex", "Progress", "RunIndex"]

INDEX_FILE = "view-index.msgpack"
INDEX_VERSION = 10  # 3: an entry's row is a RowView, the overview typed lines; 4: gate activity;
# 5: records of old scripted runs labelled from the manifest, entries by (seed, trial) (#40);
# 6: a row names its trial; 7: corrupt lines counted, the first 100 kept (#47); 8: a score
# and a cell line count the replies cut at their token budget (#49); 9: read as `ladder
# score` reads (#50): a bad line named by its line number, the lines of a file counted;
# 10: an entry is an array, its row and cost the facts they read (episode_facts, #50)
MAX_INDEX_BYTES = MAX_LINE_BYTES  # a cached index over this is ignored and rebuilt (#47)


class _Cache(msgspec.Struct, kw_only=True):
    version: int
    schema: int
    files: dict[str, FileIndex]
    overview: list[ResultLine] | None = None


class _Saved(msgspec.Struct, kw_only=True):
    """:class:`_Cache` as written: each file's index as encoded once (the same bytes)."""

    version: int
    schema: int
    files: dict[str, msgspec.Raw]
    overview: list[ResultLine] | None = None


class Progress(NamedTuple):
    """How far a refresh in the background got."""

    files: int  # log files indexed so far
    total: int  # log files to index
    episodes: int  # episodes indexed so far


_Cells = dict[str, dict[tuple[int, int], tuple[Path, Entry]]]


class RunIndex:
    """Every episode of a run directory, by cell slug and seed, with its score and offset."""

    def __init__(
        self, run_dir: Path, lines: Callable[[list[EpisodeScore]], list[ResultLine]] | None = None
    ) -> None:
        self.run_dir = run_dir
        # ``lines``: the run's result lines of the indexed scores, computed by a refresh
        # that changed the index and saved with it (the viewer's overview: score_lines)
        self._lines = lines
        self.path = run_dir / INDEX_FILE
        self.overview: list[ResultLine] | None = None  # lines cached by set_overview
        self._raw: dict[str, tuple[FileIndex, bytes]] = {}  # each file's index as encoded
        self.files: dict[str, FileIndex] = self._load()
        self.episodes = EpisodeCache()
        self.scanned = 0  # records read by the last refresh (0: all from the cache)
        # slug -> (seed, trial) -> where the record lies and its entry; replaced, never
        # changed in place, while a refresh runs in the background (read from another thread)
        self._by_slug: _Cells = {}
        self._lock = threading.Lock()
        self._build: Build | None = None
        self._progress: Progress | None = None
        self._ready = False  # _by_slug built from files (the first refresh builds it)
        # slug -> the entries its cost and gate activity were computed from, and those
        self._sums: dict[str, tuple[list[Entry], CellCost, GateActivity | None]] = {}

    # --- the cache file ---------------------------------------------------------------
    def _load(self) -> dict[str, FileIndex]:
        try:
            # a regular file, never through a link, bounded (#47); anything else: rebuilt
            data = read_regular(self.path, cap=MAX_INDEX_BYTES, follow=False)
            cache = msgspec.msgpack.decode(data, type=_Saved)
            if cache.version != INDEX_VERSION or cache.schema != SCHEMA_VERSION:
                return {}
            decode = msgspec.msgpack.Decoder(FileIndex).decode
            with paused_gc():
                files = {name: decode(raw) for name, raw in cache.files.items()}
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            return {}
        self.overview = cache.overview
        self._raw = {name: (fi, bytes(cache.files[name])) for name, fi in files.items()}
        return files

    def _save(self) -> None:
        with self._lock:
            raw: dict[str, msgspec.Raw] = {}
            for name, fi in self.files.items():
                hit = self._raw.get(name)
                if hit is None or hit[0] is not fi:
                    hit = self._raw[name] = (fi, msgspec.msgpack.encode(fi))
                raw[name] = msgspec.Raw(hit[1])
            data = msgspec.msgpack.encode(
                _Saved(
                    version=INDEX_VERSION, schema=SCHEMA_VERSION, files=raw, overview=self.overview
                )
            )
        with contextlib.suppress(OSError):  # a read-only run directory: the index in memory
            write_atomic(self.path, data)  # mkstemp + rename: never through a planted link

    # --- building -----------------------------------------------------------------------
    def refresh(self, wait: bool = True) -> bool:
        """Index what the logs gained since the last refresh; True when anything changed.
        ``wait=False``: a refresh large enough for worker processes runs in the background
        (:meth:`progress`); one already running is left to run."""
        if self._build is not None:
            if not wait and not self._build.finished.is_set():
                return False
            build, self._build = self._build, None
            try:
                build.wait()  # its error raised here (a log refused as not regular)
            except BaseException:
                self._progress = None  # what it indexed stays; the next refresh goes on
                raise
        self.scanned = 0
        base = self.run_dir
        paths = {str(p.relative_to(base)): p for p in log_files(base)}
        before = {name: (fi.indexed_to, fi.records) for name, fi in self.files.items()}
        kept: dict[str, FileIndex] = {}
        todo: list[Todo] = []
        grown = 0
        for name, p in paths.items():
            old = self.files.get(name)
            try:
                size, head = size_and_head(p)  # NotRegularFile: refused naming it, as `score`
            except NotRegularFile:
                raise
            except OSError:
                continue  # removed or unreadable since listed
            if old is not None and size == old.indexed_to and head.startswith(old.head):
                kept[name] = old
                continue
            todo.append((name, str(p), old))
            self._raw.pop(name, None)  # grown in place (one process) or sent back anew
            grown += max(0, size - (old.indexed_to if old else 0))
        if not todo and self._ready and list(kept) == list(self.files):
            return False  # nothing new: every file as indexed, in the listing's order
        if grown >= MIN_PARALLEL_BYTES and todo and (not wait or cores() > 1):
            build = Build(todo, self._add, self._prime)
            workers = build.workers(cores())
            if workers > 1 or (workers and not wait):
                self._start(kept, todo, len(paths))
                if wait:
                    with paused_gc():  # the indexes coming back: no cycles, many objects
                        return self._finish(paths, {**kept, **build.run()}, before)
                self._build = build
                build.start(lambda got: self._finish(paths, {**kept, **got}, before))
                return True
        with paused_gc():
            return self._finish(paths, {**kept, **self._one_process(todo)}, before)

    def _one_process(self, todo: list[Todo]) -> dict[str, FileIndex]:
        """The indexes of ``todo`` grown in place in this process, one episode cache for the
        run; ``scanned`` counts the records."""
        replays = Replays()  # for this refresh: the arms of one seed share identical replays
        out: dict[str, FileIndex] = {}
        for name, path, old in todo:
            try:
                fi, n = index_file(Path(path), old, self.episodes, replays)
            except NotRegularFile:
                raise  # a planted link or FIFO: refused naming it, as `score` does
            except OSError:
                continue  # removed or unreadable since listed
            out[name] = fi
            self.scanned += n
        return out

    def _start(self, kept: dict[str, FileIndex], todo: list[Todo], total: int) -> None:
        """Before a refresh on workers: what needs no reading is readable at once, and what
        the files to read held before (until their parts come back)."""
        with self._lock:
            self.files = {}
            self._by_slug = {}
            self._progress = Progress(0, total, 0)
        for name, fi in kept.items():
            self._add(name, fi, fi.entries.values(), None, 0, True)
        for name, _, old in todo:
            if old is not None:
                self._add(name, old, old.entries.values(), None, 0, False)

    def _add(
        self,
        name: str,
        fi: FileIndex,
        new: Iterable[Entry],
        raw: bytes | None,
        scanned: int,
        done: bool,
    ) -> None:
        """A file's index so far in (``new``: its entries new since the last; from a worker:
        ``raw``, the whole index as encoded), readable at once; ``done``: the whole file."""
        path = self.run_dir / name
        with self._lock:
            if raw is not None:
                self._raw[name] = (fi, raw)
            self.files = {**self.files, name: fi}
            cells = dict(self._by_slug)
            fresh: set[str] = set()
            for entry in new:
                slug = entry.slug
                if slug not in fresh:
                    cells[slug] = dict(cells.get(slug, {}))
                    fresh.add(slug)
                cells[slug][(entry.seed, entry.trial)] = (path, entry)
            self._by_slug = cells
            self.scanned += scanned
            if self._progress is not None:
                files, total, _ = self._progress
                episodes = sum(len(cell) for cell in cells.values())
                self._progress = Progress(files + done, total, episodes)

    def _prime(self, names: list[str]) -> None:
        """The lines of a configuration whose files are all in (``names``), computed while
        the rest is read: :attr:`_lines` keeps them (a memo) for the overview at the end."""
        files = self.files
        if self._lines is None or not all(name in files for name in names):
            return
        cells: dict[str, dict[tuple[int, int], Entry]] = {}
        for name in sorted(names):  # as _finish orders them
            for entry in files[name].entries.values():
                cells.setdefault(entry.slug, {})[(entry.seed, entry.trial)] = entry
        self._lines([e.score for cell in cells.values() for e in cell.values()])

    def _finish(
        self,
        paths: dict[str, Path],
        got: dict[str, FileIndex],
        before: dict[str, tuple[int, int]],
    ) -> bool:
        """The refreshed indexes in the listing's order, readable; saved when changed."""
        files = {name: got[name] for name in paths if name in got}
        changed = set(before) != set(paths)
        for name, fi in files.items():
            changed |= before.get(name) != (fi.indexed_to, fi.records)
        cells: _Cells = {}
        for name in sorted(files):
            for entry in files[name].entries.values():
                unit = (entry.seed, entry.trial)
                cells.setdefault(entry.slug, {})[unit] = (paths[name], entry)
        overview = self.overview
        if changed:
            scores = [e.score for cell in cells.values() for _, e in cell.values()]
            overview = self._lines(scores) if self._lines is not None else None
        with self._lock:
            self.files, self._by_slug, self._progress = files, cells, None
            self._ready = True
            self.overview = overview
        if changed:
            self._save()
        return changed

    def progress(self) -> Progress | None:
        """How far a refresh in the background got (None: none running)."""
        return self._progress

    def built(self, timeout: float | None = None) -> bool:
        """Whether no refresh runs in the background, waiting up to ``timeout`` seconds for
        one to end (its error is raised by the next :meth:`refresh`)."""
        build = self._build
        return build is None or build.finished.wait(timeout)

    def close(self) -> None:
        """Stop a refresh in the background (what it indexed so far stays readable)."""
        if self._build is not None:
            self._build.cancel()

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

    def costs(self) -> dict[str, CellCost]:
        """Each cell's cost per episode (:func:`scoring.display.run_overview.cell_cost`), by slug."""
        return {slug: self._cell_sums(slug, cell)[0] for slug, cell in self._by_slug.items()}

    def gates(self) -> dict[str, GateActivity]:
        """Each gate cell's activity, merged over its completed episodes (by slug)."""
        out: dict[str, GateActivity] = {}
        for slug, cell in self._by_slug.items():
            gate = self._cell_sums(slug, cell)[1]
            if gate is not None:
                out[slug] = gate
        return out

    def _cell_sums(
        self, slug: str, cell: dict[tuple[int, int], tuple[Path, Entry]]
    ) -> tuple[CellCost, GateActivity | None]:
        """A cell's cost and gate activity, kept while it holds the same entries in the
        same order (a page asked each second while the index fills computes only the cells
        that changed, #50)."""
        entries = [e for _, e in cell.values()]
        hit = self._sums.get(slug)
        same = hit is not None and len(hit[0]) == len(entries)
        if hit is not None and same and all(a is b for a, b in zip(hit[0], entries, strict=True)):
            return hit[1], hit[2]
        cost = facts_cell_cost(
            [(e.facts.cost, e.facts.wall_s) for e in entries if e.facts.cost is not None]
        )
        parts = [e.gate for e in entries if e.gate is not None]
        gate = merged_activity(parts) if parts else None
        self._sums = {**self._sums, slug: (entries, cost, gate)}  # replaced, never changed
        return cost, gate

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
        files = self.files
        rep = LogReport(files=len(files))
        for fi in files.values():
            rep.records += fi.records
            rep.duplicates += fi.duplicates
            rep.corrupt.extend(Problems(fi.corrupt))
            rep.corrupt.count += fi.corrupt_count - len(fi.corrupt)
        return rep
