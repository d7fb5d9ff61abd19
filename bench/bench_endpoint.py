"""Requests per second the scripted endpoint serves at zero latency on this machine.

The endpoint runs in its own process (pinned to its own core where there are two, via
``bench._endpoint``); this process is the client: aiohttp, 64 requests in flight, posting
realistic agent turns for a few seconds. The request bodies are every turn prefix of a few
S = 10 raw-transcript episodes (system brief, alternating user / assistant messages, the
perfect agent's replies), encoded once up front, so the client does little but send. The
figure is the median of three runs; the endpoint's CPU time per request (from ``/proc``)
is reported beside it because it does not depend on how busy the client's core is.

``python -m bench.bench_endpoint [--quick]`` prints one table line and one JSON line.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import aiohttp
import orjson

from bench._common import SERVER_CORE, median, row, run_loop
from bench._endpoint import endpoint_process, server_config
from protocol import EpisodeSpec, ScriptedUser, generate
from serve.agents import answer
from serve.endpoint.tokens import count_messages

__all__ = ["run"]

CONCURRENCY = 64
TARGET_RPS = 1000.0  # comfortably above what the runner benchmarks ask of the endpoint


def _bodies(seeds: range) -> tuple[list[bytes], float]:
    """Every turn of the seeds' episodes as a request body; and the mean prompt tokens."""
    bodies: list[bytes] = []
    tokens: list[int] = []
    for seed in seeds:
        ep = generate(EpisodeSpec(seed=seed, steps=10, density=0.15))
        user = ScriptedUser(ep)
        messages: list[tuple[str, str]] = [("system", ep.brief)]
        while (turn := user.next_turn()) is not None:
            user.begin(turn)
            messages.append(("user", turn.text))
            body = {
                "model": "scripted/perfect",
                "messages": [{"role": r, "content": c} for r, c in messages],
                "temperature": 0,
                "max_tokens": 400,
            }
            bodies.append(orjson.dumps(body))
            tokens.append(count_messages(messages))
            reply = answer("perfect", {}, messages, digest="bench").content
            messages.append(("assistant", reply))
            user.finish(turn, None, [])
    return bodies, sum(tokens) / len(tokens)


async def _blast(url: str, bodies: list[bytes], seconds: float) -> float:
    """Requests per second over ``seconds`` with CONCURRENCY in flight."""
    done = 0
    stop = time.perf_counter() + seconds
    headers = {"Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=CONCURRENCY)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def worker(offset: int) -> None:
            nonlocal done
            i = offset
            while time.perf_counter() < stop:
                async with session.post(
                    f"{url}/chat/completions", data=bodies[i % len(bodies)]
                ) as r:
                    assert r.status == 200, await r.text()
                    await r.read()
                done += 1
                i += CONCURRENCY

        start = time.perf_counter()
        await asyncio.gather(*(worker(k) for k in range(CONCURRENCY)))
        return done / (time.perf_counter() - start)


def run(quick: bool = False) -> dict[str, Any]:
    seconds, repeats = (1.0, 1) if quick else (3.0, 3)
    bodies, mean_tokens = _bodies(range(100, 104))
    rps: list[float] = []
    cpu_ms: list[float] = []
    with endpoint_process(server_config(), core=SERVER_CORE) as ep:

        async def main() -> None:
            await _blast(ep.url, bodies, 0.3)  # warm-up: imports, caches, connections
            for _ in range(repeats):
                cpu0 = ep.cpu_s()
                r = await _blast(ep.url, bodies, seconds)
                rps.append(r)
                cpu_ms.append(1000.0 * (ep.cpu_s() - cpu0) / (r * seconds))

        run_loop(main)
    best = median(rps)
    return {
        "case": "endpoint",
        "setup": f"scripted/perfect, zero latency, {CONCURRENCY} in flight, S=10 raw turns "
        f"(mean prompt {mean_tokens:.0f} tokens), {seconds:g} s, median of {repeats}",
        "rows": [
            row(
                "requests/s the endpoint serves",
                round(best),
                f">= {TARGET_RPS:g}",
                best >= TARGET_RPS,
            ),
            row("endpoint CPU ms per request", round(median(cpu_ms), 3), "info", None),
        ],
        "rps": [round(x, 1) for x in rps],
        "server_cpu_ms_per_request": [round(x, 3) for x in cpu_ms],
    }


def main() -> None:
    result = run(quick="--quick" in sys.argv)
    first = result["rows"][0]
    print(f"endpoint  {first['value']:>8} req/s  ({result['setup']})")
    print(orjson.dumps(result).decode())


if __name__ == "__main__":
    main()
