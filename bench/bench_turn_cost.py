"""Client CPU per turn early and late in a transcript: is the per-turn cost flat?

The history is append-only, so the runner's cost per turn should not grow with it. The
scripted endpoint answers at once in its own process on its own core; the runner (this
process, pinned to the other) runs 128 episodes of S = 15 (raw and checklist, the perfect
agent) all at once with 128 requests in flight, so they advance in step: after ``n x 128``
requests, the turns under way are about turn ``n``. Client CPU (``getrusage``) and requests
answered are sampled every 10 ms; the CPU per request between requests ``3 x 128`` and
``7 x 128`` (turns 4 to 7, around turn 5) is set against that between ``35 x 128`` and
``39 x 128`` (turns 36 to 39, the late turns before the first of the 44-turn episodes end:
the steps drift apart by a few turns, and an episode's end is per-episode work, not a
turn's), in the same run; the run stops once the late window is over (#50: its tail only
cost time). The figure is the median of the per-repeat ratios over 9 repeats, their range
and middle half in its label and all of them in the JSON (#50: 5 repeats let one loaded
repeat move it); the target is <= 1.2 (#50; it was 1.3). The streaming scorer is off (it
runs once per episode, at its end, not per turn); the JSON says how many episodes had ended
by the late window's end.

What grows with the turn and is no work of ours: the request body is the whole transcript,
encoded and sent each turn (``orjson``, the socket's copies, the event loop's wake-ups for a
larger write). A bare ``aiohttp`` loop driving the same episodes (``gather`` + semaphore,
:func:`bench._users.bare_aiohttp_agent`) pays exactly that; it runs between the runner's
repeats (3 of them) and its own ratio of the same windows is an info row, with the runner's
ratio over it: what the runner adds that grows with the turn.

The endpoint's CPU per request in the same windows is an info row: where it grows past the
client's, the endpoint becomes the bottleneck late, the client waits between responses and
its CPU per request rises with it (an idle event loop handles fewer responses per wake-up),
whatever the client does per turn. ``serve.endpoint.conversation`` (the folds over the
messages) and ``serve.endpoint.parse`` (the decoded messages, #50: only those a request
adds are decoded) keep it flat enough here.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bench._common import (
    SERVER_CORE,
    Sampler,
    client_cpu_s,
    client_sys_s,
    grid,
    median,
    row,
    run_loop,
    scratch,
)
from bench._drive import drive_runner
from bench._endpoint import endpoint_process, server_config
from bench._users import bare_aiohttp_agent, gather_all

__all__ = ["run"]

EPISODES = 128  # 64 seeds x 2 arms, all in flight at once
TARGET = 1.2  # #50 (was 1.3)
EARLY = (3, 7)  # request windows, in requests per episode
LATE = (35, 39)  # turns 36 to 39: the last four before episodes (44 turns) start to end
REPEATS, QUICK_REPEATS = 9, 2  # the runner's; the bare loop runs in every fourth one
Samples = list[tuple[float, tuple[float, ...]]]


def _at(samples: Samples, requests: float, col: int = 4) -> float:
    """Client CPU seconds (``col`` 4: user + system; 5: system) when ``requests`` requests
    had been answered (interpolated)."""
    prev = samples[0][1]
    for _, cur in samples[1:]:
        if cur[0] >= requests:
            span = cur[0] - prev[0]
            f = (requests - prev[0]) / span if span else 0.0
            return prev[col] + f * (cur[col] - prev[col])
        prev = cur
    raise ValueError(f"the run answered fewer than {requests:.0f} requests")


def _ended_by(samples: Samples, requests: float) -> int:
    """Episodes logged by the time ``requests`` requests were answered (0: the late window
    holds turns only, no episode's end)."""
    return int(next((v[3] for _, v in samples if v[0] >= requests), samples[-1][1][3]))


def _ms_per_request(samples: Samples, window: tuple[int, int], col: int = 4) -> float:
    """CPU ms per request in ``window`` (column ``col``: 4 client, 5 client system, 6 the
    endpoint process)."""
    lo, hi = (w * EPISODES for w in window)
    return 1000.0 * (_at(samples, hi, col) - _at(samples, lo, col)) / (hi - lo)


def _spread(ratios: list[float]) -> tuple[list[float], list[float]]:
    """(the ratios sorted, their middle half)."""
    ordered = sorted(ratios)
    quarter = len(ordered) // 4
    return ordered, ordered[quarter : len(ordered) - quarter] or ordered


def _windows(samples: Samples, into: dict[str, list[float]]) -> None:
    """One repeat's per-request CPU in both windows (client, its system share, endpoint)."""
    for name, window in (("early", EARLY), ("late", LATE)):
        into[f"{name}_ms"].append(_ms_per_request(samples, window))
        into[f"{name}_sys_ms"].append(_ms_per_request(samples, window, 5))
        into[f"server_{name}_ms"].append(_ms_per_request(samples, window, 6))


async def _runner_repeat(g: Any, ep: Any, got: dict[str, list[float]], ended: list[int]) -> None:
    """One repeat of the runner, stopped once the late window is over."""
    eps: list[Any] = []
    end = LATE[1] * EPISODES

    def over(_state: Any) -> bool:
        return bool(sum(e.requests for e in eps) >= end)

    with scratch("turns") as out:
        r = await drive_runner(
            g,
            out,
            score=False,
            sample_every=0.01,
            probe=ep.cpu_s,
            on_open=lambda endpoints: eps.extend(endpoints.values()),
            stop=over,
        )
    assert r.infrastructure == 0, "infrastructure errors at zero latency"
    _windows(r.samples, got)
    ended.append(_ended_by(r.samples, end))


async def _bare_repeat(g: Any, ep: Any, bare: dict[str, list[float]]) -> None:
    """One repeat of the bare aiohttp loop on the same episodes, sampled as the runner and
    stopped as it is, once the late window is over."""
    end = LATE[1] * EPISODES
    with scratch("turns-bare") as out:
        async with bare_aiohttp_agent(ep.url, "scripted/perfect", 400, EPISODES) as (a, count):

            def read() -> tuple[float, ...]:
                return (float(count[0]), 0.0, 0.0, 0.0, client_cpu_s(), client_sys_s(),
                        ep.cpu_s())  # fmt: skip

            sampler = Sampler(read, every=0.01)
            sampling = asyncio.ensure_future(sampler.run())
            running = asyncio.ensure_future(gather_all(g, a, count, out / "log.jsonl"))
            while count[0] < end and not running.done():
                await asyncio.sleep(0.01)
            sampler.samples.append((time.perf_counter(), read()))
            for task in (running, sampling):
                task.cancel()
            await asyncio.gather(running, sampling, return_exceptions=True)
    _windows(sampler.samples, bare)  # raises where the loop answered too few requests


def run(quick: bool = False) -> dict[str, Any]:
    repeats = QUICK_REPEATS if quick else REPEATS
    keys = ("early_ms", "late_ms", "early_sys_ms", "late_sys_ms", "server_early_ms")
    got: dict[str, list[float]] = {k: [] for k in (*keys, "server_late_ms")}
    bare: dict[str, list[float]] = {k: [] for k in got}
    ended: list[int] = []
    with endpoint_process(server_config(), core=SERVER_CORE) as ep:
        g = grid(
            ep.url,
            steps=15,
            seeds=f"100-{99 + EPISODES // 2}",
            concurrency=EPISODES,
            max_in_flight=EPISODES,
        )

        # warm-up: imports and module caches, on 16 episodes (#50: nothing cached is per
        # episode; the whole grid cost 2.3 s of the bench)
        warm = grid(ep.url, steps=15, seeds="100-107", concurrency=EPISODES)

        async def main() -> None:
            with scratch("turns") as out:
                await drive_runner(warm, out, score=True)
            for i in range(repeats):  # the bare loop in every fourth repeat, ABBA
                if i % 8 == 4:
                    await _bare_repeat(g, ep, bare)
                await _runner_repeat(g, ep, got, ended)
                if i % 8 == 0:
                    await _bare_repeat(g, ep, bare)

        run_loop(main)
    return _result(repeats, got, bare, ended)


def _ratios(d: dict[str, list[float]], prefix: str = "") -> list[float]:
    early, late = d[f"{prefix}early_ms"], d[f"{prefix}late_ms"]
    return [b / a for a, b in zip(early, late, strict=True)]


def _result(
    repeats: int, got: dict[str, list[float]], bare: dict[str, list[float]], ended: list[int]
) -> dict[str, Any]:
    ratios, middle = _spread(_ratios(got))
    ratio = median(ratios)
    bare_ratios, bare_middle = _spread(_ratios(bare))
    bare_ratio = median(bare_ratios)
    server = median(_ratios(got, "server_"))
    return {
        "case": "turn_cost",
        "setup": f"{EPISODES} episodes of S=15 at once (raw+checklist, perfect agent), zero "
        f"latency, {EPISODES} in flight, median of {repeats} (the bare aiohttp loop: "
        f"{len(bare_ratios)}, between them)",
        "rows": [
            row(
                "client CPU ms per request around turn 5",
                round(median(got["early_ms"]), 4),
                "info",
                None,
            ),
            row(
                "client CPU ms per request around turn 38 (36-39)",
                round(median(got["late_ms"]), 4),
                "info",
                None,
            ),
            row("endpoint: turn 36-39 / turn 4-7 CPU per request", round(server, 3), "info", None),
            row(
                f"bare aiohttp loop: turn 36-39 / turn 4-7 client CPU per request (median of "
                f"{len(bare_ratios)}, {bare_ratios[0]:.3f}-{bare_ratios[-1]:.3f})",
                round(bare_ratio, 3),
                "info",
                None,
            ),
            row(
                "  runner's ratio / the bare loop's (what the runner adds that grows)",
                round(ratio / bare_ratio, 3),
                "info",
                None,
            ),
            row(
                f"turn 36-39 / turn 4-7 client CPU per request (median of {repeats}, per-repeat "
                f"{ratios[0]:.3f}-{ratios[-1]:.3f}, middle half {middle[0]:.3f}-{middle[-1]:.3f})",
                round(ratio, 3),
                f"<= {TARGET}",
                ratio <= TARGET,
            ),
        ],
        **got,
        "episodes_ended_in_late_window": ended,
        "ratios": ratios,
        "ratio_middle_half": [middle[0], middle[-1]],
        "bare": {
            **bare,
            "ratios": bare_ratios,
            "ratio_middle_half": [bare_middle[0], bare_middle[-1]],
        },
    }
