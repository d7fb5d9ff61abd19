"""A refresh of the viewer's index on worker processes (:class:`Build`), in the caller's thread
or a thread of its own.

The files to read are grouped by configuration as ``ladder score``'s workers group them
(:func:`runner.rundir.rescore.config_groups` across models: the arms and models of one seed
share one regenerated episode, and the replays they play alike) and the groups shared out
over one worker process per core, the biggest first to the least loaded; a configuration
that would overload its worker is left to a tail of arms, each taken by whichever worker
runs low first (:func:`_shared_out`: the workers end together). Each worker indexes its
groups' files one at a time
(:func:`runner.viewer.entries.index_task`, one episode cache a configuration), and each file's
index is handed over as soon as it comes back (``add``), so a page can show what is in while
the rest is read (#50). scipy's binomial functions are imported meanwhile (the overview's
p-values need them).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as first_done
from pathlib import Path

import msgspec

from runner.files import NotRegularFile
from runner.grid.packs import loaded_texts, register_texts
from runner.rundir.rescore import config_groups
from runner.viewer.entries import Done, Entry, FileIndex, index_task
from scoring.gc_pause import paused_gc

__all__ = ["Build", "Todo"]

Todo = tuple[str, str, FileIndex | None]  # a log's name in the index, its path, its old index
# name, its index so far, the entries new in it, the whole index as encoded (with its last
# part), records read, whether the file is done
Add = Callable[[str, FileIndex, Iterable[Entry], bytes | None, int, bool], None]


PARTS = 4  # a new file is indexed in this many parts (a page shows episodes sooner)
NICE = 5  # the workers' niceness over the serving process's
LOW = PARTS  # a worker with this many parts queued or fewer takes the tail's next arm
_Future = Future[Done]


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _worker(texts: dict[str, str]) -> None:
    """A worker's start: behind the process that serves the pages (a page and scipy's
    import are not slowed by the indexing they wait for), with its packs."""
    with contextlib.suppress(OSError):
        os.nice(NICE)
    register_texts(texts)


def _stops(path: str, old: FileIndex | None) -> list[int | None]:
    """Where each part of a file stops (None: at its end): a new file in :data:`PARTS`
    parts by its size now, a grown one in one."""
    size = _size(path) if old is None else 0
    return [size * k // PARTS for k in range(1, PARTS) if size] + [None]


def _arm(path: str) -> str:
    """A log's arm and knobs (its cell slug without the model, its regime and its
    configuration): the files of one arm of a configuration, every model's."""
    parts = Path(path).stem.split("__")
    return "__".join(parts[6:]) if len(parts) >= 7 else path


Share = list[tuple[int, list[str]]]  # a worker's configurations, each with its files there


def _shared_out(
    groups: list[list[str]], sizes: dict[str, int], n: int
) -> tuple[list[Share], Share]:
    """The configurations (``groups``, every model's files of one, the biggest first) over
    ``n`` workers, by size: each to the least loaded worker, whole while it fits that
    worker's even share (each episode regenerated, and each replay the models share made,
    once in the run, as ``ladder score``'s workers do, #50). A configuration that does not
    fit is split by arm (each arm's files of every model together, the biggest first): the
    tail, each arm taken by whichever worker runs low first (:meth:`Build.run`), so the
    workers end together. (Each worker's share, the tail.)"""
    loads = [0] * n
    shares: list[Share] = [[] for _ in range(n)]
    tail: Share = []
    even = sum(sizes[p] for paths in groups for p in paths) / n
    for g, paths in enumerate(groups):
        i = loads.index(min(loads))
        size = sum(sizes[p] for p in paths)
        if loads[i] + size <= even or n == 1:
            shares[i].append((g, list(paths)))
            loads[i] += size
            continue
        arms: dict[str, list[str]] = {}
        for p in paths:
            arms.setdefault(_arm(p), []).append(p)
        tail += [(g, u) for u in sorted(arms.values(), key=lambda u: -sum(sizes[p] for p in u))]
    return shares, tail


class Build:
    """One refresh of the files ``todo`` on worker processes, each file's index handed to
    ``add`` as it comes back."""

    def __init__(
        self, todo: list[Todo], add: Add, group_done: Callable[[list[str]], object] | None = None
    ) -> None:
        self.todo = todo
        self.add = add
        self.group_done = group_done  # a configuration's files all in (names): its lines now
        self.finished = threading.Event()
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shares: list[list[tuple[int, list[Todo]]]] = []
        self._tail: deque[tuple[int, list[Todo]]] = deque()  # taken as the workers run low
        self._stops: dict[str, list[int | None]] = {}  # where each file's parts stop
        self._old = {name: old for name, _, old in todo}
        self._got: dict[str, FileIndex] = {}
        self._gone: set[str] = set()
        self._left: dict[str, int] = {}
        self._groups: dict[int, list[str]] = {}  # a configuration's files (names)
        self._group_of: dict[str, int] = {}
        self._decode = msgspec.msgpack.Decoder(FileIndex).decode

    def workers(self, jobs: int) -> int:
        """Share the configurations out over at most ``jobs`` workers; how many (0: the files
        could not be grouped, a log removed since listed: one process decides)."""
        where = {t[1]: t for t in self.todo}  # path -> its todo
        try:
            groups = config_groups([Path(p) for p in where], across_models=True)
        except OSError:
            return 0
        sizes = {p: _size(p) for p in where}
        shares, tail = _shared_out(groups, sizes, max(1, min(jobs, len(where))))
        self._shares = [
            [(g, [where[p] for p in paths]) for g, paths in share]
            for share in shares
            if share or tail
        ]
        self._tail = deque((g, [where[p] for p in paths]) for g, paths in tail)
        for g, paths in enumerate(groups):
            self._groups[g] = [where[p][0] for p in paths]
            self._group_of.update((where[p][0], g) for p in paths)
        for name, path, old in self.todo:
            self._stops[name] = _stops(path, old)
            self._left[name] = len(self._stops[name])
        return len(self._shares)

    def run(self) -> dict[str, FileIndex]:
        """Every file's index (one unreadable since listed left out); a file refused as not
        regular raises :class:`NotRegularFile` naming it."""
        texts = loaded_texts()  # the workers regenerate with the packs this process loaded
        pools = [
            ProcessPoolExecutor(1, initializer=_worker, initargs=(texts,)) for _ in self._shares
        ]
        try:
            queues = [
                deque(self._submit(pool, share))
                for pool, share in zip(pools, self._shares, strict=True)
            ]
            self._feed(pools, queues)
            while any(queues) and not self._stop.is_set():
                heads = {q[0]: q for q in queues if q}  # each worker's next part, in order
                done, _ = first_done(heads, return_when=FIRST_COMPLETED)
                for future in done:
                    heads[future].popleft()
                    self._take(*future.result())
                self._feed(pools, queues)
        finally:
            for pool in pools:
                pool.shutdown(wait=True, cancel_futures=True)
        return self._got

    def _feed(self, pools: list[ProcessPoolExecutor], queues: list[deque[_Future]]) -> None:
        """The tail's next arm to the worker with the fewest parts queued, while that is
        :data:`LOW` or fewer (a worker never waits for one; the last arms go to whichever
        worker is ahead)."""
        while self._tail:
            i = min(range(len(queues)), key=lambda j: len(queues[j]))
            if len(queues[i]) > LOW:
                return
            queues[i].extend(self._submit(pools[i], [self._tail.popleft()]))

    def _submit(
        self, pool: ProcessPoolExecutor, share: list[tuple[int, list[Todo]]]
    ) -> list[_Future]:
        """A worker's parts in its order: per configuration, each file's first part, then
        each file's second, and so on (a new file is read in :data:`PARTS` parts)."""
        out: list[_Future] = []
        stops = self._stops
        for g, items in share:
            for k in range(PARTS):
                out += [
                    pool.submit(index_task, g, name, path, old, stops[name][k])
                    for name, path, old in items
                    if k < len(stops[name])
                ]
        return out

    def _take(self, name: str, raw: bytes | str | None, n: int, whole: bool) -> None:
        """One part back: merged into the file's index so far, handed over; the last of a
        configuration's: :attr:`group_done` (its lines computed while the rest is read)."""
        self._take_part(name, raw, n, whole)
        names = self._groups[self._group_of[name]]
        if self.group_done is not None and not any(self._left[x] for x in names):
            self.group_done([x for x in names if x in self._got])

    def _take_part(self, name: str, raw: bytes | str | None, n: int, whole: bool) -> None:
        self._left[name] -= 1
        if isinstance(raw, str):
            raise NotRegularFile(raw)
        if raw is None or name in self._gone:
            self._gone.add(name)  # removed or unreadable since listed: left out
            self._got.pop(name, None)
            return
        part = self._decode(raw)
        fi = part
        if not whole:  # the entries set since the last part, the counts as they stand
            entries = self._got.get(name, self._old[name] or part).entries
            fi = msgspec.structs.replace(part, entries={**entries, **part.entries})
        self._got[name] = fi
        last = self._left[name] == 0
        if last and not whole:  # encoded now, while the workers read, not when it is saved
            raw = msgspec.msgpack.encode(fi)
        self.add(name, fi, part.entries.values(), raw if last else None, n, last)

    def start(self, done: Callable[[dict[str, FileIndex]], object]) -> None:
        """:meth:`run` in a thread of its own, then ``done`` with its indexes (not when
        cancelled); :attr:`finished` set at the end, an error kept for :meth:`wait`."""

        def work() -> None:
            try:
                with paused_gc():  # the indexes coming back: no cycles, many objects
                    got = self.run()
                    if not self._stop.is_set():
                        done(got)
            except BaseException as e:  # raised again in the thread that waits
                self.error = e
            finally:
                self.finished.set()

        self._thread = threading.Thread(target=work, name="view-index", daemon=True)
        self._thread.start()

    def wait(self) -> None:
        """Until the thread ends; its error raised here."""
        if self._thread is not None:
            self._thread.join()
        if self.error is not None:
            raise self.error

    def cancel(self) -> None:
        """Stop after the file being handed over (the workers' queued files dropped)."""
        self._stop.set()
