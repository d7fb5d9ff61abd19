"""The one usage error of the command line: a command refuses with ``raise UsageError(msg)``
and the root (:class:`ladder.app.OneLineErrors`) prints ``error: msg`` on stderr and exits 2."""

from __future__ import annotations

import sys

__all__ = ["USAGE_EXIT", "UsageError", "error_text", "leaf", "shown"]

USAGE_EXIT = 2


class UsageError(Exception):
    """A command's refusal of what it was given; the message is one line."""

    def __init__(self, message: str) -> None:
        message = shown(message)
        super().__init__(message)
        self.message = message


def shown(message: str) -> str:
    """``message`` as every error or warning line of the command line prints it: the
    configured keys redacted, then its control characters (C0, C1, bidi, zero-width) shown
    as escapes, never obeyed (#47): a server's echo of the key, a planted file name's OSC
    sequence or a hostile option value in click's own message."""
    if "scoring.redact" in sys.modules:  # not imported: no endpoint registered a key
        from scoring.redact import redact

        message = redact(message)
    if all(" " <= c <= "~" or c in "\n\t" for c in message):
        return message  # nothing to escape: a root error (``ladder bogus``) stays light (#49)
    from protocol.visible import visible  # here: it loads the protocol package

    return visible(message)


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
