"""Crash-safe writes in a run directory: the one JSON-lines appender (logs, results, the
probe's re-asks, the caches) and the one atomic replace (manifest, final results, cache
entries).

A line is one ``os.write`` of the whole line (retried until written) on an ``O_APPEND``
descriptor, so a kill -9 leaves at most one torn last line; opening ends a torn line left
by an earlier kill, so the next line starts clean and a reader loses one line, never two
glued together. A failed write (a full disk) cuts the partial line back off. The file is
opened with ``O_NOFOLLOW``: a link planted where the file goes is refused, never written
through. :func:`write_atomic` writes a new file beside the target (created exclusively, so
never through a link) and renames it over the target: a kill leaves the old file or the new
one.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

__all__ = ["JsonlAppender", "write_atomic"]

_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)


class JsonlAppender:
    """Appends whole lines to one file; ``with JsonlAppender(path) as out: out.write(line)``."""

    def __init__(self, path: Path, *, sync: bool = True) -> None:
        self.path = path
        self._sync = sync  # fsync on close (logs, results); the caches skip it
        self._fd = os.open(path, _FLAGS, 0o644)
        try:
            self._end_torn_line()
        except OSError:
            os.close(self._fd)
            raise

    def _end_torn_line(self) -> None:
        size = os.fstat(self._fd).st_size
        if size and os.pread(self._fd, 1, size - 1) != b"\n":
            os.write(self._fd, b"\n")

    def write(self, line: bytes | bytearray | memoryview) -> None:
        """Append ``line`` (which ends with its newline) whole, or not at all."""
        start = os.fstat(self._fd).st_size  # one writer per file (runner.rundir.lock)
        try:
            with memoryview(line) as view:
                _write_all(self._fd, view)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, start)
            raise OSError(e.errno, e.strerror, str(self.path)) from None

    def close(self) -> None:
        if self._fd < 0:
            return
        try:
            if self._sync:
                os.fsync(self._fd)
        finally:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _write_all(fd: int, view: memoryview) -> None:
    """Write all of ``view`` (``os.write`` may write less than asked)."""
    written = 0
    while written < len(view):
        written += os.write(fd, view[written:])


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file, fsync and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        with memoryview(data) as view:
            _write_all(fd, view)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
