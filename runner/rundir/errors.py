"""The one refusal of a run directory that cannot be read or scored (printed by the CLI's
root as one ``error:`` line, exit 2)."""

from __future__ import annotations

__all__ = ["RunDirError"]


class RunDirError(ValueError):
    """A run directory that cannot be read or scored; the message is one line (or one line
    per problem)."""
