"""The run directory's one-line refusal, apart from the readers so that the command line's root
catches it without importing them (``ladder --version`` stays light)."""

from __future__ import annotations

__all__ = ["RunDirError"]


class RunDirError(ValueError):
    """A run directory that cannot be read or scored; the message is one line (or one line
    per problem)."""
