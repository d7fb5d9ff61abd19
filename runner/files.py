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

Reading (#36): a run directory may be shared, and a grid, a pack or a log may be planted (a
symlink to ``/dev/zero`` or to a file outside the run, a FIFO that blocks an ``open``, a
sparse file of gigabytes with no newline). Every read here is of a regular file (opened
non-blocking, checked with ``fstat`` before a byte is read), bounded in bytes, and a log is
read a line at a time with a per-line cap (docs/security.md).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from protocol.visible import one_line
from runner.redact import redact_bytes

__all__ = [
    "BULK_BUFFER",
    "MAX_FILE_BYTES",
    "MAX_LINE_BYTES",
    "JsonlAppender",
    "Line",
    "NotRegularFile",
    "is_regular",
    "lines",
    "open_regular",
    "planted_entries",
    "read_regular",
    "write_atomic",
    "write_new",
]

_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)


def _folder_fd(path: Path, root: Path | None) -> tuple[int | None, str]:
    """(a descriptor on the folder of ``path``, its name there). With ``root`` (a run
    directory, ``path`` under it), the folders from ``root`` down are opened one at a time
    with ``O_NOFOLLOW`` (created when missing, never through a link): a folder swapped for a
    link mid-run is refused, not written through (#47). Without: (None, the path)."""
    if root is None:
        return None, str(path)
    parts = path.relative_to(root).parts
    root.mkdir(parents=True, exist_ok=True)  # as the user named it; below it, no link
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)  # the run directory as the user named it
    try:
        for part in parts[:-1]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=fd)
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
    except OSError as e:
        os.close(fd)
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise NotRegularFile(
                f"{_shown(path)}: a folder on its way from {_shown(root)} is a link or not a "
                "folder; refused, never written through"
            ) from None
        raise
    return fd, parts[-1]


def _open_in(path: Path, root: Path | None, flags: int) -> int:
    folder, name = _folder_fd(path, root)
    try:
        return os.open(name, flags, 0o644, dir_fd=folder)
    finally:
        if folder is not None:
            os.close(folder)


class JsonlAppender:
    """Appends whole lines to one file; ``with JsonlAppender(path) as out: out.write(line)``.
    ``root``: the run directory ``path`` lies in, each folder on the way opened without
    following a link."""

    def __init__(self, path: Path, *, sync: bool = True, root: Path | None = None) -> None:
        self.path = path
        self._sync = sync  # fsync on close (logs, results); the caches skip it
        self._fd = _open_in(path, root, _FLAGS)
        try:
            if not stat.S_ISREG(os.fstat(self._fd).st_mode):  # a FIFO, a device (#36)
                raise NotRegularFile(f"{_shown(path)}: not a regular file")
            self._end_torn_line()
        except OSError:
            os.close(self._fd)
            raise

    def _end_torn_line(self) -> None:
        size = os.fstat(self._fd).st_size
        if size and os.pread(self._fd, 1, size - 1) != b"\n":
            os.write(self._fd, b"\n")

    def write(self, line: bytes | bytearray | memoryview) -> None:
        """Append ``line`` (which ends with its newline) whole, or not at all; an API key in
        it is redacted first (:mod:`runner.redact`)."""
        line = redact_bytes(bytes(line) if not isinstance(line, bytes) else line)
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


def write_atomic(path: Path, data: bytes, *, root: Path | None = None) -> None:
    """Write ``data`` to ``path`` through a temporary file, fsync and ``os.replace``; an API
    key in it is redacted first (:mod:`runner.redact`). ``root``: the run directory ``path``
    lies in, each folder on the way opened without following a link."""
    data = redact_bytes(data)
    if root is None:
        path.parent.mkdir(parents=True, exist_ok=True)
    folder, name = _folder_fd(path, root)
    tmp = f".{path.name}.{uuid.uuid4().hex}.tmp"
    if folder is None:
        tmp = str(path.with_name(tmp))
    try:
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=folder
        )
        try:
            with memoryview(data) as view:
                _write_all(fd, view)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=folder)
            raise
        os.close(fd)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    finally:
        if folder is not None:
            os.close(folder)


def write_new(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file ``path``: created exclusively (``FileExistsError`` when
    anything is there, a dangling link included: never written through; #47)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    data = redact_bytes(data)
    fd = os.open(path, flags, 0o644)
    try:
        with memoryview(data) as view:
            _write_all(fd, view)
    finally:
        os.close(fd)


# --- reading (#36) ------------------------------------------------------------

MAX_FILE_BYTES = 64 << 20  # a grid, a pack, a manifest, a cache index
# A log line: one episode record. A reply is capped at 4 MiB (runner.client.wire.reply_cap),
# and a record holds an episode's replies; 256 MiB is far above any real record.
MAX_LINE_BYTES = 256 << 20
_CHUNK = 1 << 20
# the read buffer of a reader that walks a whole file of long lines (an episode log:
# tens of kB a line), four times faster than the default 8 kB there (#50)
BULK_BUFFER = 1 << 20


class NotRegularFile(OSError):
    """A path that is not a regular file (a FIFO, a device, a directory, a link where
    links are refused), or a file over its cap; its message names the path."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EINVAL, message)

    def __str__(self) -> str:
        return str(self.strerror)


def _shown(path: Path) -> str:
    """A path as an error line shows it: a planted name's escapes shown, never obeyed (#47)."""
    return one_line(str(path), 1000)


def is_regular(path: Path, *, follow: bool = False) -> bool:
    """Whether ``path`` is a regular file (``follow=False``: and not a symlink)."""
    try:
        st = path.stat() if follow else path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode)


def open_regular(path: Path, *, follow: bool = False) -> int:
    """A read descriptor on the regular file ``path`` (:class:`NotRegularFile` otherwise);
    the open never blocks on a FIFO."""
    return _open_regular(path, follow=follow)


def _open_regular(path: Path, *, follow: bool) -> int:
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if not follow and e.errno == errno.ELOOP:  # the path is a symlink
            raise NotRegularFile(f"{_shown(path)}: a symlink, refused") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotRegularFile(f"{_shown(path)}: not a regular file")
    os.set_blocking(fd, True)
    return fd


def read_regular(path: Path, *, cap: int = MAX_FILE_BYTES, follow: bool = True) -> bytes:
    """The bytes of the regular file ``path``; :class:`NotRegularFile` for anything else
    (``follow=False``: a symlink too) or a file over ``cap`` bytes."""
    fd = _open_regular(path, follow=follow)
    with os.fdopen(fd, "rb") as f:
        data = f.read(cap + 1)
    if len(data) > cap:
        raise NotRegularFile(f"{_shown(path)}: over {cap} bytes")
    return data


class Line(NamedTuple):
    offset: int  # of the line's first byte
    text: bytes | None  # without the newline; None: over the cap (skipped, never held)
    complete: bool  # False: a last line without its newline
    size: int  # bytes the line takes, newline included


def lines(
    path: Path,
    start: int = 0,
    *,
    cap: int = MAX_LINE_BYTES,
    follow: bool = False,
    buffer: int = io.DEFAULT_BUFFER_SIZE,
) -> Iterator[Line]:
    """Each :class:`Line` of the regular file ``path`` from byte ``start`` (a line start).
    Memory: one line, at most ``cap`` bytes, and a read buffer of ``buffer`` bytes (a
    reader of whole files of long lines passes :data:`BULK_BUFFER`: a line of an episode
    log is tens of kB, which the default 8 kB buffer reads in several calls and copies)."""
    fd = _open_regular(path, follow=follow)
    with os.fdopen(fd, "rb", buffering=buffer) as f:
        f.seek(start)
        offset = start
        while True:
            line = f.readline(cap + 1)
            if not line:
                return
            size = len(line)
            if size > cap and not line.endswith(b"\n"):
                while True:  # skip the rest of an oversize line, a chunk at a time
                    more = f.readline(_CHUNK)
                    size += len(more)
                    if not more or more.endswith(b"\n"):
                        break
                yield Line(offset, None, True, size)
                offset += size
                continue
            complete = line.endswith(b"\n")
            yield Line(offset, line[:-1] if complete else line, complete, size)
            offset += size


def planted_entries(run_dir: Path) -> list[str]:
    """The entries of a run directory, its ``logs/`` and ``cache/`` trees that are links or
    special files (a run reads and writes regular files only), as paths relative to it."""
    if not run_dir.is_dir():
        return []
    found: list[str] = []
    todo = [run_dir]
    while todo:
        folder = todo.pop()
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                if folder != run_dir or entry.name in ("logs", "cache"):
                    todo.append(Path(entry.path))
            elif not entry.is_file(follow_symlinks=False):
                found.append(str(Path(entry.path).relative_to(run_dir)))
    return sorted(found)
