"""Memory arms: client CPU per turn of each memory arm against raw, and memory per episode.

CPU: the scripted endpoint answers at once in its own process on its own core; this process
(pinned to the other core) runs one grid per arm configuration (raw; memory-topk and mem0,
each in record and augment mode; S = 10, the perfect agent, 64 episodes in flight) exactly
as ``ladder run`` does, helpers included. The figure is this process's CPU time
(``getrusage``) per agent turn, median of the repeats, and its ratio to raw. A memory turn
also pays its helper calls: one embedding request (top-k), or one mem0 extraction request
and up to two embedding requests (mem0), all through the same client.

Memory: a fresh child process per arm runs E episodes with all E in flight and reports its
peak RSS (VmHWM) above its RSS after the arm's libraries are imported, per episode.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from bench._common import CLIENT_CORE, SERVER_CORE, median, row, run_loop, scratch, status_bytes
from bench._drive import drive_runner
from bench._endpoint import endpoint_process, server_config
from runner.grid.expand import Grid, parse_grid

__all__ = ["run"]

CONFIGS: tuple[tuple[str, str], ...] = (
    ("raw", "record"),
    ("memory-topk", "record"),
    ("memory-topk", "augment"),
    ("mem0", "record"),
    ("mem0", "augment"),
)


def _grid(url: str, arm: str, mode: str, seeds: str, concurrency: int, steps: int = 10) -> Grid:
    run: dict[str, Any] = {
        "seeds": seeds,
        "graphs": [{"steps": steps, "density": 0.15}],
        "arms": [arm],
        "concurrency": concurrency,
    }
    if mode == "augment":
        run["variants"] = [{"arm": arm, "memory_mode": "augment"}]
    g = parse_grid(
        {
            "run": run,
            "endpoints": [{"name": "bench", "base_url": url, "max_in_flight": 64}],
            "models": [{"name": "scripted/perfect", "endpoint": "bench"}],
            "decoding": {"attempts": 2, "backoff_s": 0.05, "timeout_s": 120},
        },
        source="bench",
    )
    if mode == "augment":
        g.run.arms = []  # the augment variant's cell alone (a grid file needs one plain arm)
    return g


async def _once(g: Grid, prefix: str) -> tuple[float, int, int]:
    from runner.gates.helper_models import Helpers

    with scratch(prefix) as out:
        r = await drive_runner(g, out, score=True, helpers=Helpers)
    assert r.infrastructure == 0, "infrastructure errors at zero latency"
    return 1000.0 * r.cpu_s / r.turns, r.turns, r.requests


def _child(url: str, arm: str, episodes: int) -> dict[str, Any]:
    import runner.arms.memory

    if arm == "mem0":
        import runner.memory.mem0_store  # noqa: F401
    g = _grid(url, arm, "record", f"100-{99 + episodes}", episodes, steps=5)
    base = status_bytes("VmRSS")

    async def main() -> float:
        ms, _, _ = await _once(g, "memarm")
        return ms

    run_loop(main)
    return {"arm": arm, "episodes": episodes, "base": base, "peak": status_bytes("VmHWM")}


def run(quick: bool = False) -> dict[str, Any]:
    seeds = "100-103" if quick else "100-107"
    repeats = 1 if quick else 2
    in_flight = 32 if quick else 64
    cpu: dict[str, list[float]] = {}
    calls: dict[str, float] = {}
    mem: dict[str, dict[str, Any]] = {}
    with endpoint_process(server_config(), core=SERVER_CORE) as ep:

        async def main() -> None:
            await _once(_grid(ep.url, "mem0", "record", "100-100", 8, steps=5), "warm")  # imports
            for _ in range(repeats):
                for arm, mode in CONFIGS:
                    ms, turns, requests = await _once(_grid(ep.url, arm, mode, seeds, 64), "cpuarm")
                    cpu.setdefault(f"{arm} {mode}", []).append(ms)
                    calls[f"{arm} {mode}"] = round(requests / turns, 2)

        run_loop(main)
        for arm in ("raw", "memory-topk", "mem0"):
            args = [sys.executable, "-m", "bench.bench_memory_arms", ep.url, arm, str(in_flight)]
            if CLIENT_CORE is not None:
                args.append(str(CLIENT_CORE))
            out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
            mem[arm] = json.loads(out.strip().splitlines()[-1])
    raw = median(cpu["raw record"])
    rows = []
    for key, values in cpu.items():
        ms = median(values)
        label = "raw" if key == "raw record" else key
        rows.append(row(f"client CPU ms per turn, {label}", round(ms, 3), "info", None))
        if key != "raw record":
            rows.append(row(f"  x raw, {label}", round(ms / raw, 2), "info", None))
    kib = {a: (m["peak"] - m["base"]) / 1024 / m["episodes"] for a, m in mem.items()}
    rows.append(
        row(
            f"RSS KiB per episode in flight, raw ({in_flight} in flight, S=5)",
            round(kib["raw"], 1),
            "info",
            None,
        )
    )
    for arm in ("memory-topk", "mem0"):
        rows.append(
            row(
                f"  {arm}: KiB per episode in flight above raw (its store)",
                round(kib[arm] - kib["raw"], 1),
                "info",
                None,
            )
        )
    return {
        "case": "memory_arms",
        "setup": f"zero latency, S=10, perfect agent, seeds {seeds}, 64 in flight, "
        f"median of {repeats}; memory: {in_flight} episodes in flight, S=5",
        "rows": rows,
        "ms_per_turn": cpu,
        "requests_per_turn": calls,
        "memory": mem,
    }


if __name__ == "__main__":
    from bench._common import pin

    if len(sys.argv) > 4:
        pin(int(sys.argv[4]))
    print(json.dumps(_child(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
