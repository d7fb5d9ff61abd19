"""States folded over a request's messages, remembered per conversation.

An episode's next request repeats the previous request's messages and adds a few (the
agent's reply, the next user turn; an arm may send a user turn with an addition and keep it
without, so the previous request's last message is not always repeated). What the endpoint
computes message by message is therefore stored for every request's messages but its last,
and the next request of the same conversation looks up its own messages less the last
three, one or two, and folds only the rest (:mod:`serve.endpoint.conversation`). The same
memo keeps a conversation's decoded messages by their raw JSON (:mod:`serve.endpoint.parse`).

Exact: a state is found only under messages equal to the ones it was folded over (compared
in full; the dict's key, the prefix's length with its first and last messages, only narrows
the candidates), so a hit is the state a fold from the start would reach. A hit takes its
entry out (a conversation holds one entry at a time); the memo keeps the ``maxsize`` most
recent, and a miss folds from the start.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar, cast

__all__ = ["CUTS", "MEMO_DEFAULT", "Message", "PrefixMemo"]

# OURS: conversations remembered (their last request's folds) by a standalone server, whose
# clients are unknown; a run's embedded endpoint bounds it by the run's concurrency (#47):
# the default bound of every per-conversation memo (serve.endpoint.conversation.bound_memo)
MEMO_DEFAULT = 4096

Message = tuple[str, str]  # (role, content)
E = TypeVar("E")  # a message: (role, content), or its raw JSON (serve.endpoint.parse)
S = TypeVar("S")
_Key = tuple[int, Hashable, Hashable]

# How many trailing messages a request adds to the prefix its conversation stored last, in
# the order tried: the next turn (reply, kept user turn, new user turn), an identical resend
# (a thinking retry), one exchange appended.
CUTS = (3, 1, 2)


class PrefixMemo(Generic[E, S]):
    """Fold states by message prefix: :meth:`take` the longest usual prefix's, :meth:`keep`
    one for a request's messages but its last. ``hashable``: a message's stand-in in the
    dict key (None: the message itself, which must be hashable); a request's messages are
    always of one sequence type (a prefix is compared with ``==``)."""

    def __init__(
        self, maxsize: int = 4096, hashable: Callable[[E], Hashable] | None = None
    ) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self._hashable = hashable
        self._entries: OrderedDict[_Key, list[tuple[Sequence[E], S]]] = OrderedDict()
        self._size = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return self._size

    def _key(self, messages: Sequence[E], n: int) -> _Key:
        """The dict key of ``messages[:n]`` (without slicing them)."""
        h = self._hashable
        if h is None:
            return (n, cast(Hashable, messages[0]), cast(Hashable, messages[n - 1]))
        return (n, h(messages[0]), h(messages[n - 1]))

    def take(self, messages: Sequence[E]) -> tuple[int, S] | None:
        """``(n, state)``: the state stored for ``messages[:n]`` (taken out of the memo), for
        the first of :data:`CUTS` that has one; None when none has."""
        for cut in CUTS:
            n = len(messages) - cut
            if n < 1:
                continue
            key = self._key(messages, n)
            found = self._entries.get(key)
            if found is None:
                continue
            prefix = messages[:n]
            for i, (stored, state) in enumerate(found):
                if stored == prefix:
                    del found[i]
                    if not found:
                        del self._entries[key]
                    self._size -= 1
                    self.hits += 1
                    return n, state
        self.misses += 1
        return None

    def keep(self, prefix: Sequence[E], state: S) -> None:
        """Remember ``state`` as the fold of ``prefix``; the caller must not change it later."""
        if not prefix:
            return
        key = self._key(prefix, len(prefix))
        found = self._entries.get(key)
        if found is None:
            self._entries[key] = [(prefix, state)]
        else:
            found.append((prefix, state))
            self._entries.move_to_end(key)
        self._size += 1
        self.resize(self.maxsize)

    def resize(self, maxsize: int) -> None:
        """Keep at most ``maxsize`` entries from now on (the oldest dropped at once)."""
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        while self._size > self.maxsize:
            _, oldest = self._entries.popitem(last=False)
            self._size -= len(oldest)

    def clear(self) -> None:
        self._entries.clear()
        self._size = 0
