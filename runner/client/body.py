"""An agent conversation's request body, built incrementally (#50): :class:`Transcript`.

Each turn an episode sends its whole transcript, so encoding the body afresh
(:func:`runner.client.wire.chat_body`) costs the client work that grows with the history. The
episode runner makes its history of :class:`Message` objects, which cannot be edited once
made, so the same object always encodes to the same bytes. A :class:`Transcript` (one per
episode run, in :data:`TRANSCRIPT`; the agent call passes it to
:meth:`runner.client.endpoint.Endpoint.chat`) keeps the encodings of the messages its
previous body carried after the first, as long as they are :class:`Message` objects, and
builds the next body from them: what it checks each turn is that the same objects come
again (pointers, not their text), and it encodes only the messages that are new. The bytes
are those of :func:`~runner.client.wire.chat_body` (tests/runner/client/test_body.py pins it
over random conversations); a body it cannot build so (a message with other than ``str``
keys and values, an ``extra`` naming ``model`` or ``messages``) is encoded by
:func:`~runner.client.wire.chat_body` itself.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import NoReturn

import orjson

from runner.client.wire import chat_body

__all__ = ["TRANSCRIPT", "Message", "Transcript"]

# The transcript of the episode run in flight (None: outside an episode; the episode runner
# sets a fresh one per episode run).
TRANSCRIPT: ContextVar[Transcript | None] = ContextVar("ladder_transcript", default=None)

_OWN_KEYS = frozenset({"model", "messages"})  # extra naming these: chat_body's path
_NONE = object()  # nothing kept yet (no model, no message, no number is it)


class Message(dict[str, str]):
    """A message of an episode's history (``Message(role=..., content=...)``): a dict that is
    never edited once made (an edit raises :class:`TypeError`), so a :class:`Transcript` may
    keep its encoding. Copies (``dict(m)``, ``{**m}``) are plain dicts."""

    __slots__ = ()

    def _edit(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a message of the history is not edited once made (#50)")

    __setitem__ = __delitem__ = __ior__ = _edit
    clear = pop = popitem = setdefault = update = _edit

    def __reduce__(self) -> tuple[type[Message], tuple[dict[str, str]]]:
        return Message, (dict(self),)


def _plain(message: object) -> bool:
    """A message whose encoding may be reused: a dict (or :class:`Message`) of ``str`` keys
    to ``str`` values."""
    if type(message) is not dict and type(message) is not Message:
        return False
    if len(message) == 2 and "role" in message and "content" in message:  # the usual one
        return type(message["role"]) is str and type(message["content"]) is str
    return all(type(k) is str and type(v) is str for k, v in message.items())


class Transcript:
    """One conversation's kept encodings: the :class:`Message` objects its last body carried
    after the first message and their encodings joined by commas; the first message (a
    :class:`Message`) and its encoding; the body's head (its model) and tail (its numbers,
    where no ``extra`` is sent)."""

    __slots__ = ("_encoded", "_first", "_head", "_sent", "_tail")

    def __init__(self) -> None:
        self._sent: list[Mapping[str, str]] = []
        self._encoded = bytearray()
        self._first: tuple[object, bytes] = (_NONE, b"")
        self._head: tuple[object, bytes] = (_NONE, b"")
        self._tail: tuple[object, object, bytes] = (_NONE, _NONE, b"")

    def body(
        self,
        model: str,
        messages: Sequence[Mapping[str, str]],
        temperature: float,
        max_tokens: int,
        extra: Mapping[str, object] | None,
    ) -> bytes:
        """The body :func:`~runner.client.wire.chat_body` makes of these arguments."""
        if type(messages) is not list or len(messages) < 2 or (extra and _OWN_KEYS & extra.keys()):
            return chat_body(model, messages, temperature, max_tokens, extra)
        k = self._keep(messages)
        first, last, rest = messages[0], messages[-1], messages[1 + k : -1]
        if first is not self._first[0]:  # a Message: the same object, the same bytes
            if not _plain(first):
                return chat_body(model, messages, temperature, max_tokens, extra)
            self._first = (first if type(first) is Message else _NONE), orjson.dumps(first)
        if not _plain(last) or (rest and not all(map(_plain, rest))):
            return chat_body(model, messages, temperature, max_tokens, extra)
        if model != self._head[0] or type(model) is not str:
            self._head = model, b'{"model":' + orjson.dumps(model) + b',"messages":['
        parts: list[bytes | bytearray] = [self._head[1], self._first[1]]
        if k:
            parts += (b",", self._encoded)
        if rest:  # not kept (no Message): encoded as they come, between brackets cut off
            parts += (b",", orjson.dumps(rest)[1:-1])
        t, m, tail = self._tail  # the same number objects (0 and 0.0 are equal, not alike)
        if temperature is not t or max_tokens is not m or extra:
            fixed = {"temperature": temperature, "max_tokens": max_tokens}
            tail = b"]," + orjson.dumps({**fixed, **extra} if extra else fixed)[1:]
            if not extra:
                self._tail = temperature, max_tokens, tail
        parts += (b",", orjson.dumps(last), tail)
        return b"".join(parts)

    def _keep(self, messages: list[Mapping[str, str]]) -> int:
        """How many messages after the first are kept: those kept before that come again (the
        same objects, in order), then the new :class:`Message` objects of ``str`` text, up to
        the last message, encoded once (together)."""
        sent = self._sent
        k = len(sent)
        if k and (len(messages) - 2 < k or not all(map(operator.is_, messages[1 : k + 1], sent))):
            k = 0  # the longest run of the same objects stays, encoded again (a rare turn)
            for message, kept in zip(messages[1:-1], sent, strict=False):
                if message is not kept:
                    break
                k += 1
            del sent[k:]
            self._encoded = bytearray(orjson.dumps(sent)[1:-1])
        new = messages[1 + k : -1]
        for i, m in enumerate(new):
            if type(m) is not Message or not _plain(m):
                new = new[:i]
                break
        if new:
            encoded = orjson.dumps(new)  # first: a message it refuses leaves nothing half kept
            if k:
                self._encoded += b","
            self._encoded += encoded[1:-1]
            sent += new
        return k + len(new)
