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
    (:mod:`ladder.early`), so both print the same line."""
    if not logdir.is_dir():
        raise RunDirError(f"cannot read {logdir}: not a directory")
