"""The one usage error of the command line: a command refuses with ``raise UsageError(msg)``
and the root (:class:`ladder.app.OneLineErrors`) prints ``error: msg`` on stderr and exits 2."""

from __future__ import annotations

__all__ = ["USAGE_EXIT", "UsageError", "error_text", "leaf"]

USAGE_EXIT = 2


class UsageError(Exception):
    """A command's refusal of what it was given; the message is one line."""

    def __init__(self, message: str) -> None:
        # a server's echo of the key never reaches the screen, a planted name's escapes are
        # shown, never obeyed (#47); imported here: ``ladder --version`` never loads protocol
        from protocol.visible import visible
        from runner.redact import redact

        message = visible(redact(message))
        super().__init__(message)
        self.message = message


def error_text(message: str) -> str:
    """``error: message``; a message of several lines (the grid-change refusal) gets the
    prefix on each, so every line of stderr says what it is (#49)."""
    return "\n".join(f"error: {line}" for line in message.splitlines() or [""])


def leaf(e: BaseException) -> BaseException:
    """The exception that matters inside task groups' exception groups (a cancellation only
    when nothing else is there)."""
    import asyncio  # here: ``ladder --version`` and ``-h`` never import asyncio

    while isinstance(e, BaseExceptionGroup):
        leaves = [leaf(x) for x in e.exceptions]
        e = next((x for x in leaves if not isinstance(x, asyncio.CancelledError)), leaves[0])
    return e
