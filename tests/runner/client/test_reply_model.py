"""A reply is what it says it is (#47): a 200 carrying both `choices` and an `error` is a
malformed body (retried, then an infrastructure error), and a reply naming another model
than asked is counted and warned once per endpoint."""

from __future__ import annotations

import pytest

from runner.client.call_stats import CallStats
from runner.client.wire import Retry, read_chat

CHOICE = {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}


def test_choices_and_an_error_together_are_malformed() -> None:
    with pytest.raises(Retry, match="both choices and an error"):
        read_chat({"choices": [CHOICE], "error": {"message": "overloaded"}})
    assert read_chat({"choices": [CHOICE], "error": None}).content == "ok"


def test_the_model_a_reply_names_is_read() -> None:
    assert read_chat({"choices": [CHOICE], "model": "m-1"}).model == "m-1"
    assert read_chat({"choices": [CHOICE], "model": ["m"]}).model is None
    assert read_chat({"choices": [CHOICE], "model": "x" * 201}).model is None


def test_another_model_is_counted_and_warned_once() -> None:
    stats = CallStats(endpoint="e")
    assert stats.answered_by("gpt-4o", "gpt-4o") is None
    assert stats.answered_by("gpt-4o", "gpt-4o-2024-08-06") is None  # a dated snapshot
    assert stats.answered_by("gpt-4o", None) is None
    first = stats.answered_by("gpt-4o", "other\x1b[31m")
    assert first is not None and "'gpt-4o'" in first and "\\x1b" in first
    assert stats.answered_by("gpt-4o", "other") is None
    assert stats.other_model == 2
