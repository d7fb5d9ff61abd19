"""What the endpoint reads from a request's messages, carried from the conversation's
previous request: the prompt tokens, the request digest and the agents' reading of the
transcript.

An episode resends its growing transcript every turn. The three are folds over the messages,
so each is kept for a request's messages but its last (:mod:`serve.endpoint.prefix_memo`, one lookup
per request for all three), and the conversation's next request folds only the messages it
adds: the per-request cost stays flat as the transcript grows. The results equal a count, a
hash and a reading of the whole transcript (``tests/serve/agents/test_agents.py`` checks every
request of whole episodes; ``tests/serve/endpoint/test_conversation.py`` checks random message lists).
"""

from __future__ import annotations

import hashlib

import msgspec
import orjson

from serve.agents import Reading
from serve.endpoint import lineage
from serve.endpoint.parse import DECODED
from serve.endpoint.prefix_memo import MEMO_DEFAULT, Message, PrefixMemo
from serve.endpoint.tokens import REPLY_PRIMING, message_tokens

__all__ = ["MEMO_DEFAULT", "Transcript", "bound_memo", "read_transcript"]

MEMO_MIN = 256  # OURS: the least a run's embedded endpoint remembers (bound_memo)


class Transcript(msgspec.Struct, frozen=True, kw_only=True):
    """A request's messages, read."""

    prompt_tokens: int  # as serve.endpoint.tokens.count_messages counts them
    digest: str  # as serve.endpoint.parse.ChatRequest.digest hashes them (a request without a seed)
    reading: Reading  # the agents' reading of every message but the last


class _Carried:
    """The folds of a prefix of a conversation's messages."""

    __slots__ = ("hasher", "reading", "tokens")

    def __init__(self) -> None:
        self.tokens = 0  # the messages' prompt tokens, without the reply's priming
        # blake2b over the bytes of orjson.dumps(messages) up to the prefix's last message:
        # "[", then each message's JSON array, comma-separated (the closing "]" at the end)
        self.hasher = hashlib.blake2b(b"[", digest_size=16)
        self.reading = Reading()


_CARRIED: PrefixMemo[Message, _Carried] = PrefixMemo(MEMO_DEFAULT)


def bound_memo(in_flight: int | None) -> None:
    """Remember at most ``4 * in_flight`` conversations (at least :data:`MEMO_MIN`), or
    :data:`MEMO_DEFAULT` with None. A conversation's entry is taken by its next request, so
    the live ones are the episodes in flight; between two requests of one come at most the
    others' requests and their helpers' (each a single-use entry), so 4x holds every live
    one and a finished episode's last entry ages out in a few waves, not after 4,096
    conversations (a miss folds from the start: the same result, #47). The perfect agent's
    memories by lineage (:mod:`serve.endpoint.lineage`, #48) and the decoded messages
    (:data:`serve.endpoint.parse.DECODED`) take the same bound."""
    bound = MEMO_DEFAULT if in_flight is None else max(MEMO_MIN, 4 * in_flight)
    _CARRIED.resize(bound)
    DECODED.resize(bound)  # the conversations' decoded messages (serve.endpoint.parse)
    lineage.resize(bound)  # the perfect agent's memories, one or two per episode in flight


def read_transcript(messages: tuple[Message, ...]) -> Transcript:
    """``messages`` read, from what their conversation's previous request carried."""
    if not messages:
        empty = hashlib.blake2b(b"[]", digest_size=16).hexdigest()
        return Transcript(prompt_tokens=REPLY_PRIMING, digest=empty, reading=Reading())
    hit = _CARRIED.take(messages)
    start, carried = hit if hit is not None else (0, _Carried())
    for i in range(start, len(messages) - 1):
        role, content = messages[i]
        carried.tokens += message_tokens(role, content)
        encoded = orjson.dumps(messages[i])
        carried.hasher.update(b"," + encoded if i else encoded)
        carried.reading.add(role, content)
    _CARRIED.keep(messages[:-1], carried)
    role, content = messages[-1]
    last = carried.hasher.copy()
    last.update(b"," if len(messages) > 1 else b"")
    last.update(orjson.dumps(messages[-1]))
    last.update(b"]")
    return Transcript(
        prompt_tokens=carried.tokens + message_tokens(role, content) + REPLY_PRIMING,
        digest=last.hexdigest(),
        reading=carried.reading,
    )
