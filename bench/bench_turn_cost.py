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
turn's), in the same run. The figure is the median ratio over repeats; the target is
<= 1.2 (#50; it was 1.3). The streaming scorer is off (it runs once per episode, at its
end, not per turn); the JSON says how many episodes had ended by the late window's end.

The endpoint's CPU per request in the same windows is an info row: where it grows past the
client's, the endpoint becomes the bottleneck late, the client waits between responses and
its CPU per request rises with it (an idle event loop handles fewer responses per wake-up),
whatever the client does per turn. ``serve.endpoint.conversation`` keeps it flat enough here.
"""

from __future__ import annotations

from typing import Any

from bench._common import SERVER_CORE, grid, median, row, run_loop, scratch
from bench._drive import RunResult, drive_runner
from bench._endpoint import endpoint_process, server_config

__all__ = ["run"]

EPISODES = 128  # 64 seeds x 2 arms, all in flight at once
TARGET = 1.2  # #50 (was 1.3)
EARLY = (3, 7)  # request windows, in requests per episode
LATE = (35, 39)  # turns 36 to 39: the last four before episodes (44 turns) start to end


def _at(samples: list[tuple[float, tuple[float, ...]]], requests: float, col: int = 4) -> float:
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


def _ended_by(r: RunResult, requests: float) -> int:
    """Episodes logged by the time ``requests`` requests were answered (0: the late window
    holds turns only, no episode's end)."""
    return int(next((v[3] for _, v in r.samples if v[0] >= requests), r.samples[-1][1][3]))


def _ms_per_request(r: RunResult, window: tuple[int, int], col: int = 4) -> float:
    """CPU ms per request in ``window`` (column ``col``: 4 client, 5 client system, 6 the
    endpoint process)."""
    lo, hi = (w * EPISODES for w in window)
    return 1000.0 * (_at(r.samples, hi, col) - _at(r.samples, lo, col)) / (hi - lo)


def run(quick: bool = False) -> dict[str, Any]:
    repeats = 2 if quick else 5
    early: list[float] = []
    late: list[float] = []
    sys_early: list[float] = []
    sys_late: list[float] = []
    server_early: list[float] = []
    server_late: list[float] = []
    ended: list[int] = []
    with endpoint_process(server_config(), core=SERVER_CORE) as ep:
        g = grid(
            ep.url,
            steps=15,
            seeds=f"100-{99 + EPISODES // 2}",
            concurrency=EPISODES,
            max_in_flight=EPISODES,
        )

        async def main() -> None:
            with scratch("turns") as out:  # warm-up: imports, caches, connections
                await drive_runner(g, out, score=True)
            for _ in range(repeats):
                with scratch("turns") as out:
                    r = await drive_runner(g, out, score=False, sample_every=0.01, probe=ep.cpu_s)
                assert r.infrastructure == 0, "infrastructure errors at zero latency"
                early.append(_ms_per_request(r, EARLY))
                late.append(_ms_per_request(r, LATE))
                sys_early.append(_ms_per_request(r, EARLY, 5))
                sys_late.append(_ms_per_request(r, LATE, 5))
                server_early.append(_ms_per_request(r, EARLY, 6))
                server_late.append(_ms_per_request(r, LATE, 6))
                ended.append(_ended_by(r, LATE[1] * EPISODES))

        run_loop(main)
    ratios = [b / a for a, b in zip(early, late, strict=True)]
    ratio = median(ratios)
    return {
        "case": "turn_cost",
        "setup": f"{EPISODES} episodes of S=15 at once (raw+checklist, perfect agent), zero "
        f"latency, {EPISODES} in flight, median of {repeats}",
        "rows": [
            row("client CPU ms per request around turn 5", round(median(early), 4), "info", None),
            row(
                "client CPU ms per request around turn 38 (36-39)",
                round(median(late), 4),
                "info",
                None,
            ),
            row(
                "endpoint: turn 36-39 / turn 4-7 CPU per request",
                round(median([b / a for a, b in zip(server_early, server_late, strict=True)]), 3),
                "info",
                None,
            ),
            row(
                "turn 36-39 / turn 4-7 client CPU per request",
                round(ratio, 3),
                f"<= {TARGET}",
                ratio <= TARGET,
            ),
        ],
        "early_ms": early,
        "early_sys_ms": sys_early,
        "episodes_ended_in_late_window": ended,
        "late_sys_ms": sys_late,
        "late_ms": late,
        "ratios": ratios,
        "server_early_ms": server_early,
        "server_late_ms": server_late,
    }
