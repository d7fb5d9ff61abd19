"""The gate's one reader and writer of files (#47), in the standard library alone: tau2gate
may import protocol and scoring only (docs/architecture.md), which do no I/O, so it cannot
use ``runner.files``; this module holds it to the same rules.

Every read is of a regular file, opened non-blocking (a FIFO never hangs the open), checked
with ``fstat`` before a byte is read (a device or a directory is refused) and bounded in
bytes; every write goes to a temporary file created exclusively without following a link,
then renamed over the target, so a link planted where the file goes is replaced, never
written through; what it writes has the configured keys redacted first
(:func:`scoring.redact.redact_bytes`, the set of keys ``runner`` uses). docs/security.md
lists both.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import uuid
from pathlib import Path

from scoring.redact import redact_bytes

__all__ = ["MAX_FILE_BYTES", "NotRegularFile", "read_regular", "write_atomic"]

MAX_FILE_BYTES = 64 << 20  # a rules file, a compile: far under it (runner.files' cap)


class NotRegularFile(OSError):
    """A path that is not a regular file (a FIFO, a device, a directory), or a file over its
    cap; its message names the path (its control characters shown as escapes)."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EINVAL, message)

    def __str__(self) -> str:
        return str(self.strerror)


def _shown(path: Path) -> str:
    return ascii(str(path))[1:-1][:1000]


def read_regular(path: Path, *, cap: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (a link to one followed); :class:`NotRegularFile`
    for anything else or a file over ``cap`` bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(f"{_shown(path)}: not a regular file")
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        size = 0
        while size <= cap:
            chunk = os.read(fd, min(1 << 20, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > cap:
        raise NotRegularFile(f"{_shown(path)}: over {cap} bytes")
    return b"".join(chunks)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it (created exclusively,
    never through a link), then ``os.replace``: a kill leaves the old file or the new one.
    Every configured key in ``data`` is redacted first (#47)."""
    data = redact_bytes(data)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        with memoryview(data) as view:
            written = 0
            while written < len(view):
                written += os.write(fd, view[written:])
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
