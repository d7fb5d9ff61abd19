"""The agent's request body built turn on turn (#50, :mod:`runner.client.body`): whatever a
conversation does (new messages, kept ones sent again, a cut history, a restart, an edited
or replaced message, values that are not text, an ``extra`` that names the body's own keys),
a :class:`Transcript` sends the bytes :func:`runner.client.wire.chat_body` makes, or raises
as it raises (a hypothesis state machine); a history message is encoded once in its
episode; a :class:`Message` cannot be edited."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import runner.client.body as body_module
from runner.client.body import Message, Transcript
from runner.client.wire import chat_body

_text = st.text(max_size=12)  # surrogates included: orjson refuses them, both ways
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats() | _text,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(_text, inner, max_size=2),
    max_leaves=4,
)
_roles = st.sampled_from(["system", "user", "assistant", "tool"])
# the usual message, its keys the other way round, another key, a value that is no text
_plain_dict = st.builds(lambda r, c: {"role": r, "content": c}, _roles, _text)
_odd_dict = st.one_of(
    st.builds(lambda r, c: {"content": c, "role": r}, _roles, _text),
    st.builds(lambda r, c, n: {"role": r, "content": c, "name": n}, _roles, _text, _text),
    st.builds(lambda r, v: {"role": r, "content": v}, _roles, _json),
    st.dictionaries(_text, _text, max_size=3),
)
_message = st.one_of(_plain_dict.map(Message), _plain_dict.map(Message), _plain_dict, _odd_dict)
_extra = st.one_of(
    st.none(),
    st.just({}),
    st.dictionaries(
        st.sampled_from(["temperature", "max_tokens", "seed", "top_p", "model", "messages"])
        | _text,
        _json,
        max_size=3,
    ),
)
_number = st.sampled_from([0.0, -0.0, 0, 0.7, 1, False]) | st.floats() | st.integers()


class Conversation(RuleBasedStateMachine):
    """A history grown, cut, edited and restarted as episodes do (and as they do not), each
    request built both ways."""

    @initialize()
    def start(self) -> None:
        self.transcript = Transcript()
        self.history: list[Any] = []
        self.first: Any = {"role": "system", "content": "brief"}
        self.sent: list[Any] = []

    @rule(new=st.lists(_message, max_size=3))
    def grow(self, new: list[Any]) -> None:
        self.history += new

    @rule(first=st.one_of(_plain_dict.map(Message), _plain_dict, _odd_dict, st.just(None)))
    def new_first(self, first: Any) -> None:
        """A new system message; None: an equal one, a new object."""
        self.first = dict(self.first) if first is None else first

    @precondition(lambda self: self.history)
    @rule(data=st.data(), message=_message)
    def replace(self, data: st.DataObject, message: Any) -> None:
        i = data.draw(st.integers(0, len(self.history) - 1))
        self.history[i] = message

    @precondition(lambda self: self.history)
    @rule(data=st.data(), value=_text)
    def edit_a_plain_dict(self, data: st.DataObject, value: str) -> None:
        """A plain dict edited in place (a Message cannot be: :func:`test_a_message_...`)."""
        i = data.draw(st.integers(0, len(self.history) - 1))
        if type(self.history[i]) is dict:
            self.history[i]["content"] = value

    @rule(value=_text)
    def edit_the_first(self, value: str) -> None:
        if type(self.first) is dict:
            self.first["content"] = value

    @rule(keep=st.integers(0, 6))
    def cut(self, keep: int) -> None:
        """A window: the last ``keep`` messages (a new list of the same objects)."""
        self.history = self.history[-keep:] if keep else []

    @rule()
    def restart(self) -> None:
        self.history = []

    @rule(
        last=_message,
        model=_text,
        temperature=_number,
        max_tokens=_number,
        extra=_extra,
        as_tuple=st.booleans(),
    )
    def request(
        self, last: Any, model: str, temperature: Any, max_tokens: Any, extra: Any, as_tuple: bool
    ) -> None:
        messages: Any = [self.first, *self.history, last]
        if as_tuple:
            messages = tuple(messages)
        try:
            want: bytes | type[Exception] = chat_body(
                model, messages, temperature, max_tokens, extra
            )
        except TypeError as e:  # orjson's JSONEncodeError is a TypeError
            want = type(e)
        try:
            got: bytes | type[Exception] = self.transcript.body(
                model, messages, temperature, max_tokens, extra
            )
        except TypeError as e:
            got = type(e)
        assert got == want
        if isinstance(want, bytes):
            self.sent.append(want)

    @invariant()
    def kept_as_sent(self) -> None:
        """What is kept is what the kept messages encode to, comma-separated."""
        t = self.transcript
        assert bytes(t._encoded) == b",".join(orjson.dumps(m) for m in t._sent)
        assert all(type(m) is Message for m in t._sent)


Conversation.TestCase.settings = settings(max_examples=300, stateful_step_count=30, deadline=None)
TestConversation = Conversation.TestCase


def test_a_history_message_is_encoded_once_in_its_episode(monkeypatch: Any) -> None:
    """40 turns of a growing history (the episode runner's shape: one system Message, a new
    user message each turn, two Messages kept after it): each kept message is encoded once,
    so a turn encodes its two new messages (together) and the user message, whatever the
    length of the transcript."""
    encoded: list[object] = []

    class Spy:
        @staticmethod
        def dumps(value: object) -> bytes:
            encoded.append(value)
            return orjson.dumps(value)

    monkeypatch.setattr(body_module, "orjson", Spy)
    t, history = Transcript(), list[Message]()
    system = Message(role="system", content="brief")
    per_turn = []
    for turn in range(40):
        messages = [system, *history, {"role": "user", "content": f"turn {turn}"}]
        before = len(encoded)
        assert t.body("m", messages, 0.0, 400, {}) == chat_body("m", messages, 0.0, 400, {})
        per_turn.append(len(encoded) - before)
        history += [
            Message(role="user", content=f"{turn}"),
            Message(role="assistant", content="ok"),
        ]
    assert per_turn[0] == 4  # the system message, the user message, the model, the numbers
    assert per_turn[1:] == [2] * 39  # the two new kept messages (one list) and the user message
    kept = [m for v in encoded if isinstance(v, list) for m in v]
    assert len(kept) == len({id(m) for m in kept}) == 2 * 39  # each history message once


def test_a_message_cannot_be_edited_and_its_copies_are_dicts() -> None:
    m = Message(role="user", content="hello")
    edits: list[Callable[[], object]] = [
        lambda: m.__setitem__("content", "x"),
        lambda: m.__delitem__("role"),
        lambda: m.update(content="x"),
        lambda: m.pop("role"),
        m.popitem,
        m.clear,
        lambda: m.setdefault("name", "x"),
        lambda: m.__ior__({"content": "x"}),
    ]
    for edit in edits:
        with pytest.raises(TypeError, match="not edited"):
            edit()
    assert m == {"role": "user", "content": "hello"} and list(m) == ["role", "content"]
    assert orjson.dumps(m) == b'{"role":"user","content":"hello"}'
    assert type(dict(m)) is dict and type({**m, "content": "x"}) is dict
    for twin in (pickle.loads(pickle.dumps(m)), copy.copy(m), copy.deepcopy(m)):
        assert type(twin) is Message and twin == m
