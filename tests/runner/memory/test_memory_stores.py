"""The memory arms' stores: the faiss exchange index, the embedder cache, the endpoint's
embeddings, Mem0 on our providers, and the scripted endpoint's answer to mem0's prompt."""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Sequence

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.records import CallRecord
from runner.client.endpoint import Endpoint
from runner.grid.extras import missing
from runner.memory.embedder import EndpointEmbedder
from runner.memory.topk import ExchangeIndex
from serve.agents import answer
from serve.endpoint.app import start_server, stop_server
from serve.endpoint.embeddings import embed


def _unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_index_returns_the_most_similar_exchanges_by_cosine() -> None:
    index = ExchangeIndex(3)
    rows = np.stack([_unit(1, 0, 0), _unit(0, 1, 0), _unit(1, 1, 0), _unit(0, 0, 1)])
    index.add(rows, ["x", "y", "xy", "z"])
    query = _unit(1, 0.2, 0)
    found = index.search(query, 2)
    assert [t for _, t in found] == ["x", "xy"]  # cos 0.98, 0.83; then y 0.20, z 0
    assert found[0][0] == pytest.approx(float(query @ rows[0]), abs=1e-6)
    assert [t for _, t in index.search(query, 10)] == ["x", "xy", "y", "z"]  # k > stored
    assert ExchangeIndex(3).search(query, 5) == []


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(1, 8), st.integers(0, 2**31 - 1))
def test_index_agrees_with_a_brute_force_cosine_ranking(n: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(n, 16)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    query = rows[rng.integers(n)] + 0.1 * rng.normal(size=16).astype(np.float32)
    query = (query / np.linalg.norm(query)).astype(np.float32)
    index = ExchangeIndex(16)
    index.add(rows, [str(i) for i in range(n)])
    got = [float(s) for s, _ in index.search(query, k)]
    want = sorted((float(x) for x in rows @ query), reverse=True)[:k]
    assert got == pytest.approx(want, abs=1e-5)


class _Counting:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def embed(
        self, model: str, inputs: Sequence[str]
    ) -> tuple[list[list[float]], CallRecord]:
        self.batches.append(list(inputs))
        return [embed(t, 32) for t in inputs], CallRecord(
            role="embedding", prompt_tokens=len(inputs)
        )


async def test_embedder_batches_per_call_and_caches_by_text() -> None:
    ep = _Counting()
    emb = EndpointEmbedder(ep, "m")
    calls: list[CallRecord] = []
    a = await emb.embed(["alpha beta", "gamma"], calls)
    b = await emb.embed(["gamma", "delta", "alpha beta", "delta"], calls)
    c = await emb.embed(["delta"], calls)
    assert ep.batches == [["alpha beta", "gamma"], ["delta"]]  # one request each, no repeats
    assert len(calls) == 2 and emb.dim == 32
    assert np.array_equal(b[2], a[0]) and np.array_equal(c[0], b[1])
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0)


async def test_endpoint_embeddings_on_loopback() -> None:
    runner, url = await start_server()
    try:
        async with Endpoint([url]) as ep:
            rows, call = await ep.embed("scripted/perfect", ["book the audit", "the audit"])
    finally:
        await stop_server(runner)
    assert rows == [embed("book the audit"), embed("the audit")]
    assert call.role == "embedding" and call.prompt_tokens > 0 and call.attempts == 1


def test_missing_extra_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # runner.memory's importlib.util is this module: patch it where the package looks it up
    assert missing("memory-topk") is None and missing("raw") is None
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    msg = missing("mem0")
    assert msg is not None and "\n" not in msg
    assert "mem0" in msg and "pip install -e '.[memory]'" in msg


def _mem0_prompt(user: str, reply: str) -> list[tuple[str, str]]:
    """mem0's own extraction prompt for one exchange, built by mem0's functions (mem0 is
    imported after ``runner.memory``, which turns its telemetry off first, as in a run)."""
    from mem0.configs.prompts import (
        ADDITIVE_EXTRACTION_PROMPT,
        generate_additive_extraction_prompt,
    )
    from mem0.memory.utils import parse_messages

    new = parse_messages(
        [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]
    )
    prompt = generate_additive_extraction_prompt(
        existing_memories=[], new_messages=new, last_k_messages=[]
    )
    return [("system", ADDITIVE_EXTRACTION_PROMPT), ("user", prompt)]


def test_scripted_endpoint_answers_mem0s_extraction_prompt() -> None:
    user = "Please do the supplier audit now. Work order #W4821."
    reply = "Done: the supplier audit is complete.\n\nref RC-1234/#W4821"
    ans = answer("perfect", {}, _mem0_prompt(user, reply), digest="d")
    data = json.loads(ans.content)
    assert data == {
        "memory": [
            {"text": f"The user asked: {user}", "attributed_to": "user"},
            {
                "text": "The assistant booked RC-1234 for work order #W4821.",
                "attributed_to": "assistant",
            },
        ]
    }
    quiet = answer("perfect", {}, _mem0_prompt("Thanks.", "You are welcome."), digest="d")
    assert [m["attributed_to"] for m in orjson.loads(quiet.content)["memory"]] == [
        "user",
        "assistant",
    ]


async def test_mem0_store_extracts_on_our_endpoint_and_recalls_without_threads() -> None:
    from runner.memory.mem0_store import Mem0Store

    runner, url = await start_server()
    threads = threading.active_count()
    try:
        async with Endpoint([url]) as ep:

            async def chat(messages: list[dict[str, str]]) -> tuple[str, CallRecord]:
                r = await ep.chat("scripted/perfect", messages, max_tokens=3000, role="memory")
                return r.content, r.call

            store = Mem0Store(chat, EndpointEmbedder(ep, "scripted/perfect"))
            calls: list[CallRecord] = []
            assert await store.search("the audit", 5, calls) == []
            query = "Is the supplier audit booked?"
            await store.add("Do the supplier audit. #W4821", "ref RC-1234/#W4821", query, calls)
            await store.add("Now the vendor onboarding. #W1111", "ref RC-9999/#W1111", query, calls)
            found = await store.search(query, 5, calls)
            assert threading.active_count() == threads  # mem0 ran on the loop, no thread
    finally:
        await stop_server(runner)
    assert "The user asked: Do the supplier audit. #W4821" in found
    assert found[0] == "The user asked: Do the supplier audit. #W4821"  # the closest first
    roles = [c.role for c in calls]
    assert roles.count("memory") == 2  # one extraction call per exchange
    assert all(c.prompt_tokens > 0 for c in calls if c.role == "memory")
    # the exchange and the query go in one batch; the query is then a cache hit
    assert roles.count("embedding") == 4


def test_mem0_telemetry_is_off_and_its_directory_is_not_home() -> None:
    import os

    import mem0.memory.setup as setup
    import mem0.memory.telemetry as telemetry

    import runner.memory.mem0_store  # noqa: F401

    assert telemetry.MEM0_TELEMETRY is False
    assert getattr(telemetry.client_telemetry, "posthog", None) is None
    assert not setup.mem0_dir.startswith(os.path.expanduser("~"))


_WORDS = st.text(alphabet=st.characters(categories=("L", "N", "P", "Zs")), max_size=60)


@settings(max_examples=60, deadline=None)
@given(
    _WORDS,
    _WORDS,
    st.lists(st.tuples(st.integers(1000, 9999), st.integers(1000, 9999)), max_size=3),
)
def test_mem0_answers_are_valid_json_of_the_shape_mem0_reads(
    user: str, reply: str, refs: list[tuple[int, int]]
) -> None:
    lines = [reply, *(f"ref RC-{c}/#W{w}" for c, w in refs)]
    ans = answer("perfect", {}, _mem0_prompt(user or "Hi.", "\n\n".join(lines)), digest="d")
    memories = json.loads(ans.content)["memory"]
    assert all(set(m) == {"text", "attributed_to"} and m["text"] for m in memories)
    assert all(m["attributed_to"] in ("user", "assistant") for m in memories)
    booked = [m["text"] for m in memories if m["text"].startswith("The assistant booked")]
    if refs:
        assert booked == [f"The assistant booked RC-{c} for work order #W{w}." for c, w in refs]
