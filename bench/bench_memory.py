"""Memory and handles: peak RSS and open file descriptors with 2,000 concurrent episodes.

The runner runs in a fresh child process (so its peak RSS is its own): a grid of 2,000
episodes (raw and checklist, 1,000 seeds each, S = 10, the perfect agent) with 2,000
episodes in flight and the endpoint limit at 256 requests (the connection cap is that plus
8), against the scripted endpoint at zero latency in its own process. The child samples its
open descriptors (``/proc/self/fd``) while it runs and reports its peak RSS (VmHWM).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from bench._common import CLIENT_CORE, SERVER_CORE, grid, row, run_loop, scratch, status_bytes
from bench._endpoint import endpoint_process, server_config

__all__ = ["run"]

GIB = 1 << 30
CAP = 256


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _rss() -> float:
    return float(status_bytes("VmRSS"))


def _curve(samples: list[tuple[float, tuple[float, ...]]], requests: int) -> dict[str, Any]:
    """RSS (MiB) when each tenth of the run's requests had been answered, and the share of
    requests answered when RSS first came within 1% of the largest sampled: where in the run
    the peak is reached."""
    points = [(v[0] / max(1, requests), v[6] / (1 << 20)) for _, v in samples]
    top = max(m for _, m in points)
    tenths = [
        next((m for share, m in points if share >= k / 10), points[-1][1]) for k in range(1, 11)
    ]
    return {
        "rss_mib_by_tenth_of_requests": [round(m, 1) for m in tenths],
        "rss_peak_reached_at_share": round(next(s for s, m in points if m >= 0.99 * top), 3),
    }


def _child(url: str, episodes: int) -> dict[str, Any]:
    import anyio

    from bench._drive import drive_runner

    base_rss = status_bytes("VmRSS")
    base_fds = _fds()
    peak_fds = base_fds
    alive = 0

    async def main() -> Any:
        nonlocal peak_fds, alive
        g = grid(url, seeds=f"100-{99 + episodes // 2}", concurrency=episodes, max_in_flight=CAP)
        with scratch("mem") as out:
            async with anyio.create_task_group() as tg:

                async def watch() -> None:
                    nonlocal peak_fds
                    while True:
                        peak_fds = max(peak_fds, _fds())
                        await anyio.sleep(0.05)

                tg.start_soon(watch)
                r = await drive_runner(g, out, sample_every=0.5, probe=_rss)
                tg.cancel_scope.cancel()
        alive = int(max(episodes - v[3] for _, v in r.samples[1:])) if len(r.samples) > 1 else 0
        return r

    r = run_loop(main)
    peak = status_bytes("VmHWM")
    return {
        "episodes": r.episodes,
        "episodes_alive_at_start": alive,
        "requests": r.requests,
        "wall_s": round(r.wall_s, 2),
        "infrastructure": r.infrastructure,
        "peak_rss_bytes": peak,
        "base_rss_bytes": base_rss,
        "peak_fds": peak_fds,
        "base_fds": base_fds,
        "connection_cap": CAP + 8,
        "peak_in_flight": r.peak_in_flight,
        **_curve(r.samples, r.requests),
    }


def run(quick: bool = False) -> dict[str, Any]:
    episodes = 400 if quick else 2000
    with endpoint_process(server_config(), core=SERVER_CORE) as ep:
        args = [sys.executable, "-m", "bench.bench_memory", ep.url, str(episodes)]
        if CLIENT_CORE is not None:
            args.append(str(CLIENT_CORE))
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    m = json.loads(out.strip().splitlines()[-1])
    peak, fds = m["peak_rss_bytes"], m["peak_fds"]
    bound = m["connection_cap"] + m["base_fds"] + 8  # + log files and the loop's own
    return {
        "case": "memory",
        "setup": f"{episodes} episodes in flight, endpoint limit {CAP}, zero latency",
        "rows": [
            row(
                f"peak RSS GiB, {episodes} concurrent episodes",
                round(peak / GIB, 3),
                "< 1",
                peak < GIB,
            ),
            row(
                "peak open descriptors (bound: connection cap + base + 8)",
                fds,
                f"<= {bound}",
                fds <= bound,
            ),
            row(
                "RSS KiB per episode in flight",
                round((peak - m["base_rss_bytes"]) / 1024 / episodes, 1),
                "info",
                None,
            ),
        ],
        **m,
    }


if __name__ == "__main__":
    from bench._common import pin

    if len(sys.argv) > 3:
        pin(int(sys.argv[3]))
    print(json.dumps(_child(sys.argv[1], int(sys.argv[2]))))
