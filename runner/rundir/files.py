"""Reading and writing files a hostile directory may hold (docs/security.md).

A run directory may be shared, and a grid, a pack or a log may be planted: a symlink to
``/dev/zero`` or to a file outside the run, a FIFO that blocks an ``open``, a sparse file of
gigabytes with no newline. Every read here is of a regular file (opened non-blocking, checked
with ``fstat`` before a byte is read), bounded in bytes, and a log is read a line at a time
with a per-line cap. Every write inside a run directory refuses to follow a symlink: appends
open with ``O_NOFOLLOW``, whole files are written to a fresh ``mkstemp`` file and renamed
over the name (a rename replaces a planted link, never its target).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_LINE_BYTES",
    "Line",
    "NotRegularFile",
    "is_regular",
    "lines",
    "open_append",
    "open_regular",
    "planted_entries",
    "read_regular",
    "replace_file",
]

MAX_FILE_BYTES = 64 << 20  # a grid, a pack, a manifest, a cache index
# A log line: one episode record. A reply is capped at 4 MiB (runner.client.wire.reply_cap),
# and a record holds an episode's replies; 256 MiB is far above any real record.
MAX_LINE_BYTES = 256 << 20
_CHUNK = 1 << 20


class NotRegularFile(OSError):
    """A path that is not a regular file (a FIFO, a device, a directory, a link where
    links are refused), or a file over its cap; its message names the path."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EINVAL, message)

    def __str__(self) -> str:
        return str(self.strerror)


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
            raise NotRegularFile(f"{path}: a symlink, refused") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotRegularFile(f"{path}: not a regular file")
    os.set_blocking(fd, True)
    return fd


def read_regular(path: Path, *, cap: int = MAX_FILE_BYTES, follow: bool = True) -> bytes:
    """The bytes of the regular file ``path``; :class:`NotRegularFile` for anything else
    (``follow=False``: a symlink too) or a file over ``cap`` bytes."""
    fd = _open_regular(path, follow=follow)
    with os.fdopen(fd, "rb") as f:
        data = f.read(cap + 1)
    if len(data) > cap:
        raise NotRegularFile(f"{path}: over {cap} bytes")
    return data


class Line(NamedTuple):
    offset: int  # of the line's first byte
    text: bytes | None  # without the newline; None: over the cap (skipped, never held)
    complete: bool  # False: a last line without its newline
    size: int  # bytes the line takes, newline included


def lines(
    path: Path, start: int = 0, *, cap: int = MAX_LINE_BYTES, follow: bool = False
) -> Iterator[Line]:
    """Each :class:`Line` of the regular file ``path`` from byte ``start`` (a line start).
    Memory: one line, at most ``cap`` bytes."""
    fd = _open_regular(path, follow=follow)
    with os.fdopen(fd, "rb") as f:
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


def open_append(path: Path) -> int:
    """A descriptor appending to ``path`` (created 0644; readable, for a tail check), never
    through a symlink."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotRegularFile(f"{path}: not a regular file")
    return fd


def replace_file(path: Path, data: bytes) -> None:
    """Write ``data`` as ``path``: a fresh temporary file in its directory, flushed, renamed
    over the name. A symlink planted at ``path`` is replaced, its target untouched."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
