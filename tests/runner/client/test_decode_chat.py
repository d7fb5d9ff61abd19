"""One typed decode of a chat reply (#50): :func:`runner.client.wire.decode_chat` reads every
body as ``read_chat(parse_body(body))`` does, the same reply or the same malformed-body
refusal, whatever the body's shape (hypothesis over well-formed, nearly well-formed and
hostile bodies)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.client.wire import ChatReply, Retry, decode_chat, parse_body, read_chat

# JSON values of every kind (ints within 64 bits: orjson's range)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
_count = st.integers(min_value=-2, max_value=10**9 + 2) | _json
_text = st.text(max_size=20)
_part = _text | st.fixed_dictionaries({"type": st.just("text"), "text": _text}) | _json
_content = st.none() | _text | st.lists(_part, max_size=3) | _json


def _maybe(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """An object holding any subset of ``fields``, plus a stray key now and then."""
    return st.fixed_dictionaries({}, optional={**fields, "extra": _json})


_message = (
    _maybe(
        {
            "role": st.just("assistant"),
            "content": _content,
            "reasoning_content": _text | _json,
            "reasoning": _text | _json,
        }
    )
    | _json
)
_choice = (
    _maybe(
        {
            "index": st.integers(0, 3),
            "message": _message,
            "text": _text,
            "finish_reason": st.sampled_from(["stop", "length", "x" * 65]) | _json,
        }
    )
    | _json
)
_usage = (
    _maybe(
        {
            "prompt_tokens": _count,
            "completion_tokens": _count,
            "prompt_tokens_details": _maybe({"cached_tokens": _count}) | _json,
            "cached_tokens": _count,
        }
    )
    | _json
)
_body = _maybe({"id": _text, "choices": st.lists(_choice, max_size=2) | _json, "usage": _usage})


def _old(raw: bytes) -> ChatReply | str:
    try:
        return read_chat(parse_body(raw))
    except Retry as e:
        return f"retry: {e}"


def _new(raw: bytes) -> ChatReply | str:
    try:
        return decode_chat(raw)
    except Retry as e:
        return f"retry: {e}"


@settings(max_examples=400, deadline=None)
@given(_body)
def test_decode_chat_reads_every_body_as_read_chat_does(body: dict[str, Any]) -> None:
    raw = orjson.dumps(body)
    assert _new(raw) == _old(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"[]",
        b"{}",
        b'{"choices": []}',
        b'{"choices": [{"message": {"content": "a"}}]} x',
        b'{"choices": [{"message": {"content": "\\ud800"}}]}',
        b'{"choices": [{"message": {"content": "\xff"}}]}',
        b'{"choices": [{"message": {"content": "a"}}], "usage": {"prompt_tokens_details": '
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}}",
        b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b', "choices": [{"message": {}}]}',
        b'{"choices": [{"message": {"content": "a"}}, 5]}',
    ],
)
def test_hostile_and_odd_bodies_read_the_same(raw: bytes) -> None:
    assert _new(raw) == _old(raw)


def test_a_well_formed_reply_is_read_whole() -> None:
    raw = orjson.dumps(
        {
            "choices": [
                {
                    "message": {
                        "content": ["BOOKED ", {"type": "text", "text": "s3"}],
                        "reasoning": "why",
                    },
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": 12,
                "completion_tokens": 3,
                "prompt_tokens_details": {"cached_tokens": 8},
            },
        }
    )
    assert decode_chat(raw) == ChatReply(
        content="BOOKED s3",
        reasoning="why",
        finish_reason="stop",
        prompt_tokens=12,
        completion_tokens=3,
        cached_tokens=8,
    )
