"""The emulated prefix cache: block accounting on hand-built sequences, LRU eviction, and
``usage.prompt_tokens_details.cached_tokens`` over HTTP with replicas and their oracle."""

from __future__ import annotations

import math
from array import array

import aiohttp
import pytest

from serve.config import LatencyConfig, PrefixCacheConfig, ServerConfig
from serve.endpoint.app import start_replicas, stop_server
from serve.endpoint.prefix_cache import PrefixCache, stream
from serve.endpoint.tokens import count_messages


def toks(*ids: int) -> bytes:
    return array("i", ids).tobytes()


def test_hits_are_whole_leading_blocks_and_never_the_last_token() -> None:
    c = PrefixCache(block_size=4)
    a = toks(*range(10))  # blocks [0-3] [4-7]; the tail 8, 9 is no full block
    assert c.admit(a, 10) == 0
    assert len(c) == 2
    assert c.admit(a, 10) == 8  # both blocks
    assert c.admit(a + toks(50, 51), 12) == 8  # [8 9 50 51] is new: stored now
    assert len(c) == 3
    assert c.admit(a + toks(50, 51), 12) == 8  # the last block holds the last token
    assert c.admit(toks(*range(8)), 8) == 4  # at least one token computed: 1 block of 2
    assert c.admit(toks(99, *range(1, 10)), 10) == 0  # first token differs: no prefix
    assert c.admit(toks(0, 1, 2, 3, 9, 9, 9, 9, 9), 9) == 4  # one block shared, then apart
    assert (c.prompt_tokens, c.cached_tokens) == (10 + 10 + 12 + 12 + 8 + 10 + 9, 32)
    assert c.prefilled_tokens == c.prompt_tokens - 32


def test_lru_evicts_the_least_recently_used_blocks() -> None:
    c = PrefixCache(block_size=4, capacity_tokens=16)  # 4 blocks
    x, y, z = toks(*range(9)), toks(*range(100, 109)), toks(*range(200, 209))
    c.admit(x, 9)
    c.admit(y, 9)
    assert c.admit(x, 9) == 8  # x touched: now the most recent
    c.admit(z, 9)  # 6 blocks > 4: y's two go
    assert (len(c), c.evicted_blocks) == (4, 2)
    assert c.admit(x, 9) == 8
    assert c.admit(y, 9) == 0  # evicted; stored again, evicting z's
    assert c.admit(z, 9) == 0
    small = PrefixCache(block_size=4, capacity_tokens=12)  # 3 blocks
    small.admit(x, 9)
    small.admit(y, 9)  # x's tail block goes first (vLLM's order); its prefix block stays
    assert small.evicted_blocks == 1
    assert small.admit(x, 9) == 4


def test_a_reply_continues_the_stream_the_next_turn_resends() -> None:
    turn1 = [("system", "You are my project agent."), ("user", "Book step one, please.")]
    reply = "Done: RC-1234 booked for #W0001."
    turn2 = [*turn1, ("assistant", reply), ("user", "Now step two.")]
    s1, s2 = stream(turn1, reply), stream(turn2)
    assert len(stream(turn1)) // 4 == count_messages(turn1)  # the priming is in the prompt
    assert s2.startswith(s1)
    assert len(s2) // 4 == count_messages(turn2)


@pytest.mark.parametrize("bad", [{"block_size": 0}, {"capacity_tokens": -1}])
def test_bad_cache_config_is_refused(bad: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        PrefixCache(**bad)
    with pytest.raises(ValueError):
        ServerConfig(prefix_cache=PrefixCacheConfig(enabled=True, **bad))


async def _chat(session: aiohttp.ClientSession, url: str, msgs: list[dict[str, str]]) -> dict:  # type: ignore[type-arg]
    body = {"model": "scripted/perfect", "messages": msgs, "max_tokens": 200}
    async with session.post(url + "/chat/completions", json=body) as r:
        assert r.status == 200
        data: dict = await r.json()  # type: ignore[type-arg]
        return data


async def _stats(session: aiohttp.ClientSession, url: str) -> dict:  # type: ignore[type-arg]
    async with session.get(url.removesuffix("/v1") + "/stats") as r:
        data: dict = await r.json()  # type: ignore[type-arg]
        return data


async def test_cached_tokens_over_http_per_replica_and_the_oracle() -> None:
    block, prefill = 16, 1e-6
    config = ServerConfig(
        prefix_cache=PrefixCacheConfig(enabled=True, block_size=block),
        latency=LatencyConfig(mode="tokens", prefill_s_per_token=prefill),
    )
    runners, (a, b) = await start_replicas(config, 2)
    try:
        async with aiohttp.ClientSession() as s:
            t1 = [
                {"role": "system", "content": "You are my project agent. " * 20},
                {"role": "user", "content": "Good morning! Hope your week is going well."},
            ]
            r1 = await _chat(s, a, t1)
            u1 = r1["usage"]
            assert u1["prompt_tokens_details"] == {"cached_tokens": 0}
            reply = r1["choices"][0]["message"]["content"]
            t2 = [*t1, {"role": "assistant", "content": reply}, {"role": "user", "content": "Hi"}]
            shared = u1["prompt_tokens"] + u1["completion_tokens"]  # prompt + reply, resent
            r2 = await _chat(s, a, t2)  # same replica: the prefix is cached
            p2 = r2["usage"]["prompt_tokens"]
            want = min(shared // block, (p2 - 1) // block) * block
            assert want > 0
            assert r2["usage"]["prompt_tokens_details"] == {"cached_tokens": want}
            r3 = await _chat(s, b, t2)  # the other replica: cold
            assert r3["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}
            sa, sb = await _stats(s, a), await _stats(s, b)
    finally:
        for r in runners:
            await stop_server(r)
    p1 = u1["prompt_tokens"]
    assert (sa["prompt_tokens"], sa["cached_tokens"]) == (p1 + p2, want)
    assert sa["prefilled_tokens"] == p1 + p2 - want
    assert (sb["prompt_tokens"], sb["cached_tokens"]) == (p2, 0)
    # The oracle (one infinite cache for both) would have served b's request from a's blocks.
    assert sa["oracle_prefilled_tokens"] == p1 + p2 - want
    assert sb["oracle_prefilled_tokens"] == p2 - want
    # Service time charges prefill for uncached tokens only.
    assert math.isclose(sa["busy_s"], prefill * (p1 + p2 - want), rel_tol=1e-3)
    assert math.isclose(sb["busy_s"], prefill * p2, rel_tol=1e-3)


async def test_without_a_cache_usage_has_no_details() -> None:
    runners, (url,) = await start_replicas(ServerConfig(), 1)
    try:
        async with aiohttp.ClientSession() as s:
            r = await _chat(s, url, [{"role": "user", "content": "hello"}])
    finally:
        await stop_server(runners[0])
    assert r["usage"]["prompt_tokens_details"] is None


def test_ladder_serve_scripted_starts_n_replicas_on_n_ports() -> None:
    import subprocess
    import sys
    import urllib.request

    import orjson

    args = ["-m", "serve", "scripted", "--port", "0", "--replicas", "3", "--prefix-cache"]
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        urls = [proc.stdout.readline().strip() for _ in range(3)]
        assert len(set(urls)) == 3 and all(u.startswith("http://127.0.0.1:") for u in urls)
        for u in urls:
            with urllib.request.urlopen(u.removesuffix("/v1") + "/stats", timeout=10) as r:
                stats = orjson.loads(r.read())
            assert stats["cached_tokens"] == 0 and stats["oracle_prefilled_tokens"] == 0
    finally:
        proc.terminate()
        proc.wait(timeout=10)
