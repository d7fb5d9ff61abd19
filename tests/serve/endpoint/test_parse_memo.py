"""A chat body's messages decoded once per conversation (serve.endpoint.parse, #50): every
request of a conversation, whatever it resends, reads as a decode of its whole body would,
and a bad body is refused with the whole decode's error."""

from __future__ import annotations

import msgspec
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serve.endpoint import parse
from serve.endpoint.conversation import MEMO_DEFAULT, MEMO_MIN, bound_memo
from serve.endpoint.parse import DECODED, RequestError, parse_chat

_text = st.text(st.characters(codec="utf-8"), max_size=12)
_content = st.one_of(
    _text,
    st.none(),
    st.lists(
        st.fixed_dictionaries(
            {"type": st.sampled_from(["text", "image_url"]), "text": st.one_of(_text, st.none())}
        ),
        max_size=3,
    ),
)
_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant"]), "content": _content}
)


def _whole(body: bytes) -> tuple[tuple[str, str], ...] | str:
    """The messages a decode of the whole body reads, or the error it answers."""
    try:
        chat = parse._CHAT.decode(body)
    except msgspec.ValidationError as e:
        return f"error: Invalid request: {e}"
    except msgspec.DecodeError:
        return "error: The request body is not valid JSON."
    if not chat.messages:
        return "error: 'messages' must be a non-empty list."
    return tuple(parse._pairs(chat.messages))


def _parsed(body: bytes) -> tuple[tuple[str, str], ...] | str:
    try:
        return parse_chat(body).messages
    except RequestError as e:
        return f"error: {e.message}"


def _body(messages: list[object], spaced: bool) -> bytes:
    data = {"model": "scripted/perfect", "messages": messages, "max_tokens": 9}
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 if spaced else 0)


@settings(max_examples=150, deadline=None)
@given(
    first=st.lists(_message, min_size=1, max_size=4),
    steps=st.lists(
        st.tuples(
            st.sampled_from(["append", "resend", "change", "drop_last", "bad"]),
            st.lists(_message, min_size=1, max_size=3),
            st.integers(0, 30),
            st.booleans(),
        ),
        max_size=8,
    ),
)
def test_every_request_reads_as_its_whole_body(
    first: list[object], steps: list[tuple[str, list[object], int, bool]]
) -> None:
    DECODED.clear()
    messages = list(first)
    for kind, new, at, spaced in steps:
        if kind == "append":
            messages += new
        elif kind == "change":
            messages[at % len(messages)] = new[0]
        elif kind == "drop_last" and len(messages) > 1:
            messages = [*messages[:-1], *new]
        sent: list[object] = list(messages)
        if kind == "bad":  # a message that fails validation, where the memo may hold the rest
            sent[at % len(sent)] = {"role": 7, "content": "x"}
        body = _body(sent, spaced)
        assert _parsed(body) == _whole(body)


def test_the_next_turn_decodes_only_what_it_adds() -> None:
    """The messages a conversation sent before are the very objects decoded then."""
    DECODED.clear()
    brief = {"role": "system", "content": "brief"}
    one = parse_chat(_body([brief, {"role": "user", "content": "go 1"}], False))
    hits = DECODED.hits
    later = [brief, {"role": "user", "content": "go 1"}, {"role": "assistant", "content": "ok"}]
    two = parse_chat(_body([*later, {"role": "user", "content": "go 2"}], False))
    assert DECODED.hits == hits + 1
    assert two.messages[0] is one.messages[0]
    assert two.messages == (*one.messages, ("assistant", "ok"), ("user", "go 2"))


@pytest.mark.parametrize(
    "body",
    [
        b"{",
        b"[]",
        b'{"model": "m", "messages": [{"role": "user", "content": "\\q"}]}',
        b'{"model": "m", "messages": [{"role": "user", "content": "\xff"}]}',
        b'{"model": "m", "messages": [{"role": "user"}, {"content": "x"}]}',
        b'{"model": "m", "messages": [{"role": "user", "content": "x"}, {"role": 1}]}',
        b'{"model": 1, "messages": []}',
        b'{"model": "m", "messages": []}',
    ],
)
def test_bad_bodies_are_refused_as_before(body: bytes) -> None:
    DECODED.clear()
    parse_chat(_body([{"role": "user", "content": "x"}, {"role": "user", "content": "y"}], False))
    assert _parsed(body) == _whole(body)


def test_the_memo_is_bounded_with_the_conversations() -> None:
    try:
        bound_memo(16)
        assert DECODED.maxsize == MEMO_MIN
    finally:
        bound_memo(None)
    assert DECODED.maxsize == MEMO_DEFAULT
