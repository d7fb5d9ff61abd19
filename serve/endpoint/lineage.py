"""The perfect agent's memory store, by lineage (issue #48; docs/semantics.md, "The oracle
remembers"; what it remembers and how it reads it: :mod:`serve.agents.recall`).

Keyed by the runner's lineage token (:data:`protocol.draws.LINEAGE_HEADER`) and the model
name, so each agent of a handoff between agents (``next_model``) remembers its own sessions
only. Per key it keeps the last request's messages, the lines carried into the session in
play and the transcript last answered (that request and the reply). A request with no reply
of the agent's in it that is not a resend of the last request opens a session: what the
transcript last answered holds is remembered, and carried into every request of the new
session. A request for a handoff note is answered with the memory but leaves the transcript
as it was (its reply is a note, not a turn).

Bounded like the conversation memo (:func:`serve.endpoint.conversation.bound_memo`): the
least recently used lineage goes first; a lineage dropped forgets (its agent is amnesiac
from then on, as a request without the header is).
"""

from __future__ import annotations

from collections import OrderedDict

from serve.agents.handoff import is_note_request
from serve.agents.reading import Message
from serve.agents.recall import is_fresh, recalled, remembered
from serve.endpoint.prefix_memo import MEMO_DEFAULT

__all__ = ["clear", "recall", "remember", "resize", "size"]

Messages = tuple[Message, ...]


class _Lineage:
    """One agent's memory of one episode run."""

    __slots__ = ("last", "lines", "transcript")

    def __init__(self, last: Messages, lines: tuple[str, ...]) -> None:
        self.last = last  # the last request's messages, as sent
        self.lines = lines  # what the session in play carries from the earlier ones
        self.transcript: Messages = ()  # the last request answered as a turn, and its reply


_MEMO: OrderedDict[tuple[str, str], _Lineage] = OrderedDict()
_BOUND = [MEMO_DEFAULT]  # until conversation.bound_memo sets the run's bound


def resize(maxsize: int) -> None:
    """Keep at most ``maxsize`` lineages from now on (the least recently used dropped)."""
    if maxsize < 1:
        raise ValueError("maxsize must be at least 1")
    _BOUND[0] = maxsize
    while len(_MEMO) > maxsize:
        _MEMO.popitem(last=False)


def size() -> tuple[int, int]:
    """(lineages kept, the bound)."""
    return len(_MEMO), _BOUND[0]


def clear() -> None:
    _MEMO.clear()


def recall(lineage: str, model: str, messages: Messages) -> Messages:
    """``messages`` as the agent ``model`` of ``lineage`` reads them (what it remembers of
    its earlier sessions carried into the first user message)."""
    key = (lineage, model)
    entry = _MEMO.pop(key, None)
    if entry is None:
        entry = _Lineage(messages, ())
    elif is_fresh(messages) and messages != entry.last:  # a new session opens
        lines = remembered(entry.transcript) if entry.transcript else entry.lines
        entry = _Lineage(messages, lines)
    entry.last = messages
    _MEMO[key] = entry
    resize(_BOUND[0])
    return recalled(messages, entry.lines)


def remember(lineage: str, model: str, read: Messages, reply: str) -> None:
    """The agent answered ``read`` (the messages as it read them) with ``reply``."""
    entry = _MEMO.get((lineage, model))
    if entry is None or (read and read[-1][0] == "user" and is_note_request(read[-1][1])):
        return
    entry.transcript = (*read, ("assistant", reply))
