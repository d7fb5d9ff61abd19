"""A refresh of the viewer's index on worker processes (:class:`Build`), in the caller's thread
or a thread of its own.

The files to read are grouped by configuration as ``ladder score`` groups them
(:func:`runner.rundir.rescore.config_groups`: the arms of one seed share one regenerated
episode) and the groups shared out over one worker process per core, the biggest first to the
least loaded. Each worker indexes its groups' files one at a time
(:func:`runner.viewer.entries.index_task`, one episode cache a configuration), and each file's
index is handed over as soon as it comes back (``add``), so a page can show what is in while
the rest is read (#50). scipy's statistics are imported meanwhile (the overview needs them).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from pathlib import Path

import msgspec

from runner.files import NotRegularFile
from runner.grid.packs import loaded_texts, register_texts
from runner.rundir.rescore import config_groups
from runner.viewer.entries import FileIndex, index_task
from scoring.gc_pause import paused_gc
from scoring.results.stats import preload_stats

__all__ = ["Build", "Todo"]

Todo = tuple[str, str, FileIndex | None]  # a log's name in the index, its path, its old index
Add = Callable[[str, FileIndex, bytes | None, int], None]  # name, index, as encoded, records


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class Build:
    """One refresh of the files ``todo`` on worker processes, each file's index handed to
    ``add`` as it comes back."""

    def __init__(self, todo: list[Todo], add: Add) -> None:
        self.todo = todo
        self.add = add
        self.finished = threading.Event()
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shares: list[list[tuple[int, list[Todo]]]] = []

    def workers(self, jobs: int) -> int:
        """Share the groups out over at most ``jobs`` workers; how many (0: the files could
        not be grouped, a log removed since listed: one process decides)."""
        where = {t[1]: t for t in self.todo}  # path -> its todo
        try:
            groups = config_groups([Path(p) for p in where])
        except OSError:
            return 0
        n = max(1, min(jobs, len(groups)))
        self._shares = [[] for _ in range(n)]
        loads = [0] * n
        for g, paths in enumerate(groups):  # the biggest first, to the least loaded
            i = loads.index(min(loads))
            self._shares[i].append((g, [where[p] for p in paths]))
            loads[i] += sum(_size(p) for p in paths)
        return n

    def run(self) -> dict[str, FileIndex]:
        """Every file's index (one unreadable since listed left out); a file refused as not
        regular raises :class:`NotRegularFile` naming it."""
        texts = loaded_texts()  # the workers regenerate with the packs this process loaded
        pools = [
            ProcessPoolExecutor(1, initializer=register_texts, initargs=(texts,))
            for _ in self._shares
        ]
        got: dict[str, FileIndex] = {}
        try:
            futures: list[Future[tuple[str, bytes | str | None, int]]] = [
                pool.submit(index_task, g, *item)
                for pool, share in zip(pools, self._shares, strict=True)
                for g, items in share
                for item in items
            ]
            preload_stats()  # while the workers read: the overview needs scipy
            decode = msgspec.msgpack.Decoder(FileIndex).decode
            for future in as_completed(futures):
                name, raw, n = future.result()
                if isinstance(raw, str):
                    raise NotRegularFile(raw)
                if raw is not None:
                    got[name] = decode(raw)
                    self.add(name, got[name], raw, n)
                if self._stop.is_set():
                    break
        finally:
            for pool in pools:
                pool.shutdown(wait=True, cancel_futures=True)
        return got

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
