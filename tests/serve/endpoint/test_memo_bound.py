"""The endpoint's memo of conversations is bounded by the run (#47): a run's embedded
endpoint keeps at most 4x its episodes in flight (at least MEMO_MIN), a standalone server
MEMO_DEFAULT; shrinking drops the oldest at once, and a conversation whose entry was
dropped reads the same (a miss folds from the start)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import serve.endpoint.chat
import serve.endpoint.conversation as conversation
from runner.grid.expand import parse_grid
from serve.endpoint.conversation import MEMO_DEFAULT, MEMO_MIN, bound_memo, read_transcript
from serve.endpoint.prefix_memo import Message, PrefixMemo
from tests.reliability_kit import grid_data, run_inprocess


def test_resize_keeps_the_newest() -> None:
    memo: PrefixMemo[Message, int] = PrefixMemo(10)
    for i in range(10):
        memo.keep(((f"u{i}", "x"),), i)
    memo.resize(3)
    assert len(memo) == 3 and memo.maxsize == 3
    assert memo.take(((f"u{0}", "x"), ("a", "y"))) is None  # the oldest went
    assert memo.take(((f"u{9}", "x"), ("a", "y"))) == (1, 9)


def test_bound_memo_follows_the_runs_concurrency() -> None:
    try:
        bound_memo(16)
        assert conversation._CARRIED.maxsize == MEMO_MIN
        bound_memo(100)
        assert conversation._CARRIED.maxsize == 400
    finally:
        bound_memo(None)
    assert conversation._CARRIED.maxsize == MEMO_DEFAULT


def test_a_dropped_conversation_reads_the_same() -> None:
    messages = (("system", "brief"), ("user", "one"), ("assistant", "two"), ("user", "three"))
    whole = read_transcript(messages)
    try:
        bound_memo(1)
        for i in range(2 * MEMO_MIN):  # other conversations push this one out
            read_transcript((("system", f"other {i}"), ("user", "x")))
        again = read_transcript(messages)
    finally:
        bound_memo(None)
    assert (again.prompt_tokens, again.digest) == (whole.prompt_tokens, whole.digest)


def test_a_run_bounds_the_memo_and_gives_it_back(tmp_path: Path, monkeypatch: Any) -> None:
    data = grid_data(seeds="100-101", arms=("raw",))
    data["run"]["concurrency"] = 100
    seen: list[int] = []

    def spy(messages: tuple[tuple[str, str], ...]) -> conversation.Transcript:
        seen.append(conversation._CARRIED.maxsize)
        return read_transcript(messages)

    monkeypatch.setattr(serve.endpoint.chat, "read_transcript", spy)
    asyncio.run(run_inprocess(parse_grid(data), tmp_path / "run", check=False))
    assert seen and set(seen) == {400}  # every request of the run under its bound
    assert conversation._CARRIED.maxsize == MEMO_DEFAULT
