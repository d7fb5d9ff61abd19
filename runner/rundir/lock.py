"""The run-directory lock: one process at a time runs into a directory.

An OS lock (``flock``) on the directory itself, held for the life of the process: the OS
drops it when the process ends however it ends, so a lock left by a killed run never blocks
the next one, and no lock file is written (a refused run leaves the directory as it was).
The holder's pid is read from ``/proc/locks`` where the system has one.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

__all__ = ["RunLocked", "holder_pid", "run_lock"]


class RunLocked(Exception):
    """Another process holds the run directory; the message is one line."""


def holder_pid(path: Path) -> int | None:
    """The pid holding a ``flock`` on ``path`` (Linux's /proc/locks), or None."""
    try:
        st = os.stat(path)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split()
        if len(parts) < 6 or parts[1] != "FLOCK" or parts[-3] == "->":
            continue
        dev_inode = parts[5].rsplit(":", 1)
        if len(dev_inode) == 2 and dev_inode[1] == str(st.st_ino):
            with suppress(ValueError):
                return int(parts[4])
    return None


@contextmanager
def run_lock(out: Path) -> Iterator[None]:
    """Hold ``out``'s lock while the block runs (creating ``out``); raises RunLocked."""
    out.mkdir(parents=True, exist_ok=True)
    fd = os.open(out, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = holder_pid(out)
            who = f"process {pid}" if pid is not None else "another process"
            raise RunLocked(
                f"{out} is in use by {who}, another ladder run; wait or stop it"
            ) from None
        yield
    finally:
        os.close(fd)  # closing the last descriptor releases the lock
