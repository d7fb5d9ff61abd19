"""The endpoint's carried reading of a conversation (serve.endpoint.conversation, serve.endpoint.prefix_memo):
whatever the messages, what a request reads from its predecessor's carried folds equals a
count, a hash and a reading of its whole transcript."""

from __future__ import annotations

import asyncio
import hashlib
from functools import cache

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import EpisodeSpec, generate
from protocol.records import CallRecord, CellKey, Knobs
from runner.arms.base import EpisodeContext
from runner.client.endpoint import Reply
from runner.execution.episode_loop import run_episode
from serve.agents import answer
from serve.agents.reading import build_view
from serve.endpoint.conversation import _CARRIED, read_transcript
from serve.endpoint.prefix_memo import PrefixMemo
from serve.endpoint.tokens import count_messages
from tests.serve_driver import view_fields

Message = tuple[str, str]


@cache
def _episode_messages() -> tuple[Message, ...]:
    """The last request of a raw-arm episode the perfect agent plays in process: a real
    brief, work orders, booking lines, rejection-free replies and the revision."""
    ep = generate(EpisodeSpec(seed=101, steps=10, density=0.3))
    last: list[Message] = []

    async def agent(messages: list[dict[str, str]]) -> Reply:
        last[:] = [(m["role"], m["content"]) for m in messages]
        reply = answer("perfect", {}, last, digest="0" * 32)
        return Reply(content=reply.content, reasoning="", call=CallRecord(role="agent"))

    cell = CellKey(model="m", steps=10, density=0.3, arm="raw", knobs=Knobs())
    asyncio.run(run_episode(EpisodeContext(episode=ep, cell=cell, agent=agent)))
    return tuple(last)


_EXTRA = ["", "é ünïcode \u2028 and \\ backslash\n\nnew paragraph", "[TASK-STATE] S3 is done."]
_ROLES = st.sampled_from(["user", "assistant", "user", "assistant", "system", "developer", "tool"])


@st.composite
def _message(draw: st.DrawFn) -> Message:
    """A message of the real episode, in its own role or another, or an odd one."""
    real = _episode_messages()
    if draw(st.integers(0, 9)) == 0:
        return draw(_ROLES), draw(st.one_of(st.sampled_from(_EXTRA), st.text(max_size=30)))
    role, content = real[draw(st.integers(1, len(real) - 1))]
    return (draw(_ROLES) if draw(st.integers(0, 4)) == 0 else role), content


_MESSAGE = _message()


def _whole_digest(messages: tuple[Message, ...]) -> str:
    return hashlib.blake2b(orjson.dumps(messages), digest_size=16).hexdigest()


@settings(max_examples=150, deadline=None)
@given(
    start=st.lists(_MESSAGE, min_size=2, max_size=6),
    steps=st.lists(st.lists(_MESSAGE, min_size=1, max_size=3), min_size=1, max_size=6),
)
def test_carried_reads_equal_whole_reads(start: list[Message], steps: list[list[Message]]) -> None:
    """A conversation grows request by request (each next request keeps all of the last one
    but its last message and adds one to three, as the arms' requests do); every request
    takes its predecessor's carried folds, and its tokens, digest and view equal those of
    its whole transcript, merged same-role turns and late system messages included."""
    _CARRIED.clear()
    messages = (_episode_messages()[0], *start)  # the brief first
    hits = _CARRIED.hits
    for added in [[], *steps]:
        if added:
            messages = messages[:-1] + tuple(added)
        got = read_transcript(messages)
        assert got.prompt_tokens == count_messages(messages)
        assert got.digest == _whole_digest(messages)
        assert view_fields(build_view(messages, kept=got.reading)) == view_fields(
            build_view(messages)
        )
        view = build_view(messages, narration=True, kept=got.reading)
        assert view_fields(view) == view_fields(build_view(messages, narration=True))
    assert _CARRIED.hits - hits == len(steps)  # every request after the first took a fold


def test_the_next_turn_takes_the_previous_requests_fold() -> None:
    """The usual next request (reply, kept user turn, new user turn) finds the fold its
    conversation left, and takes it out; an unrelated conversation does not."""
    memo: PrefixMemo[Message, str] = PrefixMemo()
    first = (("system", "brief"), ("user", "sent 1"))
    memo.keep(first[:-1], "after the brief")
    nxt = (("system", "brief"), ("user", "kept 1"), ("assistant", "reply 1"), ("user", "sent 2"))
    assert memo.take(nxt) == (1, "after the brief")
    assert memo.take(nxt) is None and len(memo) == 0  # taken out
    memo.keep(nxt[:-1], "after reply 1")
    other = (("system", "other brief"), ("user", "kept 1"), ("assistant", "x"), ("user", "y"))
    assert memo.take(other) is None
    assert memo.hits == 1 and memo.misses == 2


def test_equal_prefixes_of_two_conversations_are_told_apart_by_content() -> None:
    """Two prefixes with the same length and the same first and last messages share a key;
    each is found only by a request whose messages equal it."""
    memo: PrefixMemo[Message, str] = PrefixMemo()
    a = (("system", "s"), ("user", "a"), ("user", "end"))
    b = (("system", "s"), ("user", "b"), ("user", "end"))
    memo.keep(a, "A")
    memo.keep(b, "B")
    assert memo.take((*b, ("assistant", "r"))) == (3, "B")
    assert memo.take((*a, ("assistant", "r"))) == (3, "A")


def test_the_memo_keeps_its_most_recent_entries() -> None:
    memo: PrefixMemo[Message, int] = PrefixMemo(maxsize=2)
    for i in range(3):
        memo.keep((("user", str(i)),), i)
    assert len(memo) == 2
    assert memo.take((("user", "0"), ("assistant", "r"))) is None
    assert memo.take((("user", "2"), ("assistant", "r"))) == (1, 2)
    with pytest.raises(ValueError, match="maxsize"):
        PrefixMemo(maxsize=0)


def test_an_empty_request_reads_as_nothing() -> None:
    got = read_transcript(())
    assert got.prompt_tokens == count_messages(())
    assert got.digest == _whole_digest(())


def test_a_reply_merged_into_an_earlier_one_is_read_again() -> None:
    """A request whose messages put a second assistant message after the last reply the
    conversation carried: the two merge into one turn, and a booking in the second counts,
    as it does when the whole transcript is read."""
    real = _episode_messages()
    system, ask, reply = real[0], real[1], real[2]
    assert ask[0] == "user" and reply[0] == "assistant" and "ref " in reply[1]
    first = (system, ask, ("assistant", "One moment."), ("user", "go on"))
    _CARRIED.clear()
    hits = _CARRIED.hits
    got = read_transcript(first)
    assert build_view(first, kept=got.reading).state.done == set()  # computed, and carried
    second = (*first[:-1], reply, ("user", "go on"))
    got = read_transcript(second)
    assert _CARRIED.hits == hits + 1
    view = build_view(second, kept=got.reading)
    assert view_fields(view) == view_fields(build_view(second))
    assert view.state.done  # the merged reply's booking counts


def test_a_last_message_merged_into_the_carried_reply_is_read_again() -> None:
    """A request ending in a second assistant message right after the carried reply: the
    view reads the merged reply, so its booking counts, as in a whole-transcript read."""
    real = _episode_messages()
    system, ask, reply = real[0], real[1], real[2]
    messages = (system, ask, ("assistant", "One moment."), reply)
    kept = read_transcript(messages).reading
    assert len(kept.history) == 1  # the carried reading holds the first reply only
    view = build_view(messages, kept=kept)
    assert view_fields(view) == view_fields(build_view(messages))
    assert view.state.done  # the merged reply's booking counts
