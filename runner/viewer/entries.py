"""One log file's part of the viewer's index (:mod:`runner.viewer.index`): for every record its
line's offset and length, its compact score, the facts its list row and its cell's cost read
(:mod:`scoring.display.episode_facts`) and its gate activity.

A file is read with ``ladder score``'s reading (:func:`runner.rundir.logs.read_file`)
and its records scored with ``ladder score``'s scoring, each as it is read
(:func:`scoring.results.offline.score_one`; one episode cache and one replay cache for a
configuration's files), so the index's scores are ``ladder score``'s and a faster reader or
scorer serves both (#50). On every core each worker process indexes one configuration's files
in a row (:func:`index_task`), sending each file's index back as soon as it is done, encoded
as the index file stores it.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from protocol.records import EpisodeRecord
from runner.files import NotRegularFile, open_regular
from runner.rundir.logs import MAX_KEPT_PROBLEMS, read_file
from scoring.display.episode_facts import EpisodeFacts, episode_facts
from scoring.display.episode_views import facts_row
from scoring.display.models import RowView
from scoring.gc_pause import paused_gc
from scoring.replay.episode_score import EpisodeScore, Replays
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.compact import Shared
from scoring.results.gate_report import gate_activity
from scoring.results.lines import GateActivity
from scoring.results.offline import score_one

__all__ = ["HEAD", "Entry", "FileIndex", "index_file", "index_task", "size_and_head"]

HEAD = 256  # bytes of a log's start kept to tell a replaced file from a grown one


class Entry(msgspec.Struct, kw_only=True, array_like=True):
    """One episode in the index: where its line lies, its compact score and the facts its
    list row and its cell's cost read (the row built when a page asks for it, #50)."""

    seed: int
    offset: int
    length: int
    score: EpisodeScore
    slug: str  # its cell's
    facts: EpisodeFacts
    gate: GateActivity | None = None  # a completed gate episode's (None: no gate, not completed)
    trial: int = 0  # which trial of its seed (--trials, #40)

    @property
    def row(self) -> RowView:
        """The episode's list row (:func:`scoring.display.episode_views.episode_row`)."""
        return facts_row(self.slug, self.facts, self.score)


class FileIndex(msgspec.Struct, kw_only=True):
    indexed_to: int = 0
    head: bytes = b""
    # "<seed>" (trial 0) or "<seed>/t<k>" (trial k, --trials) -> its last record in this file
    entries: dict[str, Entry] = {}
    records: int = 0
    duplicates: int = 0
    corrupt: list[str] = []  # the first MAX_KEPT_PROBLEMS (#47)
    corrupt_count: int = 0  # every corrupt line
    lines: int = 0  # lines up to indexed_to (a bad line is named by its number, as `score` does)


def size_and_head(path: Path) -> tuple[int, bytes]:
    """A log's size and first bytes, read from a regular file only: a planted FIFO, link or
    device is :class:`NotRegularFile` (refused naming it, never blocked on; #47)."""
    fd = open_regular(path)
    try:
        return os.fstat(fd).st_size, os.pread(fd, HEAD, 0)
    finally:
        os.close(fd)


def unchanged(path: Path, old: FileIndex | None) -> bool:
    """Whether ``old`` indexes all of ``path`` (neither grown, shrunk nor replaced)."""
    size, head = size_and_head(path)
    return old is not None and size == old.indexed_to and head[: len(old.head)] == old.head


def _gate(record: EpisodeRecord) -> GateActivity | None:
    """A completed gate episode's gate activity (what the overview's inert mark merges)."""
    gated = record.compile is not None or any(t.matcher_outcome for t in record.turns)
    if record.termination != "completed" or not gated:
        return None
    return gate_activity([record])


def _unit(record: EpisodeRecord) -> tuple[int, int]:
    return record.spec.seed, record.trial


def index_file(
    path: Path,
    old: FileIndex | None,
    episodes: EpisodeCache,
    replays: Replays,
    stop: int | None = None,
    touched: list[str] | None = None,
) -> tuple[FileIndex, int]:
    """``path``'s index grown from ``old`` in place (a new one from the start when it is
    new, shrunk or replaced) and the records it read; ``stop``: no line starting there or
    after it read (a file indexed in parts); ``touched`` gets the keys of the entries set."""
    size, head = size_and_head(path)
    if old is None or size < old.indexed_to or head[: len(old.head)] != old.head:
        old = FileIndex()  # new, shrunk or replaced: index from the start
    elif size == old.indexed_to:
        return old, 0
    fi = old
    shared = Shared()

    def entry(offset: int, length: int, rec: EpisodeRecord) -> Entry:
        # each record made into its entry as it is read, and dropped before the next line
        # is decoded (as ``ladder score``'s workers score, runner.rundir.rescore_part, #50)
        return Entry(
            seed=rec.spec.seed,
            offset=offset,
            length=length,
            score=score_one(rec, episodes, replays, shared),
            slug=rec.cell.slug(),
            facts=episode_facts(rec),
            gate=_gate(rec),
            trial=rec.trial,
        )

    read = read_file(path, _unit, fi.indexed_to, fi.lines, partial=True, stop=stop, value=entry)
    for e in read.found.values():
        key = f"{e.seed}" + (f"/t{e.trial}" if e.trial else "")
        fi.duplicates += key in fi.entries
        if touched is not None:
            touched.append(key)
        fi.entries[key] = e
    rep = read.report
    fi.records += rep.records
    fi.duplicates += rep.duplicates
    fi.corrupt += rep.corrupt.kept[: max(0, MAX_KEPT_PROBLEMS - len(fi.corrupt))]
    fi.corrupt_count += rep.corrupt.count
    fi.indexed_to, fi.lines, fi.head = read.end, read.lines, head
    return fi, rep.records


# A worker's caches: one configuration's files share them (the arms of one seed regenerate
# one episode and share its replays); the next configuration starts afresh. And the files it
# is indexing in parts, as far as they got (a file failed: None).
_CACHES: dict[int, tuple[EpisodeCache, Replays]] = {}
_GROWING: dict[str, FileIndex | None] = {}

# name, its index as encoded (str: refused; None: gone), records read, whether the bytes are
# its whole index (else the entries set since the last part, the counts as they stand)
Done = tuple[str, bytes | str | None, int, bool]


def index_task(group: int, name: str, path: str, old: FileIndex | None, stop: int | None) -> Done:
    """A worker's indexing of one file of configuration ``group`` (after the group's files
    before it), up to ``stop`` (a part: the next part goes on from there; None: to its end):
    what it read, msgpack-encoded; a file refused as not regular comes back as its message
    (raised in the parent), one unreadable since listed as None (so do its later parts)."""
    if group not in _CACHES:
        _CACHES.clear()
        _GROWING.clear()
        _CACHES[group] = EpisodeCache(), Replays()
    episodes, replays = _CACHES[group]
    start = old
    if name in _GROWING:  # a part after the first
        start = _GROWING[name]
        if start is None:
            return name, None, 0, True  # failed in an earlier part
    touched: list[str] = []
    with paused_gc():
        try:
            fi, n = index_file(Path(path), start, episodes, replays, stop, touched)
        except NotRegularFile as e:
            _GROWING[name] = None
            return name, str(e), 0, True
        except OSError:
            _GROWING[name] = None
            return name, None, 0, True  # removed or unreadable since listed
        if stop is not None:
            _GROWING[name] = fi
        else:
            _GROWING.pop(name, None)
        if fi is not start:  # new, or replaced since: the whole index
            return name, msgspec.msgpack.encode(fi), n, True
        part = msgspec.structs.replace(fi, entries={k: fi.entries[k] for k in touched})
        return name, msgspec.msgpack.encode(part), n, False
