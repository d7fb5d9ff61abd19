"""The run directory's one-line refusal, apart from the readers so that the command line's root
catches it without importing them (``ladder --version`` stays light)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["RunDirError", "check_logdir"]


class RunDirError(ValueError):
    """A run directory that cannot be read or scored; the message is one line (or one line
    per problem)."""


def check_logdir(logdir: Path) -> None:
    """The refusal of a run directory that is not one, shared by the readers
    (:func:`runner.rundir.records.read_run`) and the command line's early checks
    (:mod:`ladder.early`), so both print the same line. A path the system refuses to look
    up (a name too long) is that line too, never a traceback."""
    try:
        is_dir = logdir.is_dir()
    except OSError as e:  # ENAMETOOLONG and the like, which is_dir does not swallow
        raise RunDirError(f"cannot read {logdir}: {e.strerror or e}") from None
    if not is_dir:
        raise RunDirError(f"cannot read {logdir}: not a directory")
