"""The one usage error of the command line: a command refuses with ``raise UsageError(msg)``
and the root (:class:`ladder.app.OneLineErrors`) prints ``error: msg`` on stderr and exits 2."""

from __future__ import annotations

__all__ = ["USAGE_EXIT", "UsageError"]

USAGE_EXIT = 2


class UsageError(Exception):
    """A command's refusal of what it was given; the message is one line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
