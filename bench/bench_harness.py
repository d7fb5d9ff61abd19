"""The tool harness against the text protocol: client CPU per turn and memory per episode.

The scripted endpoint (the perfect agent, which speaks both protocols) answers at once in its
own process on its own core; the runner (this process) runs the same grid twice, once on the
text protocol and once on the LangGraph tool harness (``harness = "langgraph"``): raw and
checklist arms, S = 10, seeds 100..111. CPU per scripted-user turn and per agent call (a
harness turn that executes a tool makes a second call, after the tool result) is the median
over repeats, after a one-seed warm-up that pays the imports (LangGraph's included).
Memory: a fresh child process per protocol runs N episodes all in flight at once and reports
its peak RSS above its start, per episode.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from bench._common import CLIENT_CORE, SERVER_CORE, median, row, run_loop, scratch, status_bytes
from bench._endpoint import endpoint_process, server_config
from runner.grid.expand import Grid, parse_grid

__all__ = ["run"]

PROTOCOLS = ("text", "langgraph")


def harness_grid(url: str, harness: str, *, seeds: str, concurrency: int) -> Grid:
    return parse_grid(
        {
            "run": {
                "seeds": seeds,
                "graphs": [{"steps": 10, "density": 0.15}],
                "arms": [],
                "variants": [
                    {"arm": "raw", "harness": harness},
                    {"arm": "checklist", "harness": harness},
                ],
                "concurrency": concurrency,
            },
            "endpoints": [{"name": "bench", "base_url": url, "max_in_flight": 256}],
            "models": [{"name": "scripted/perfect", "endpoint": "bench"}],
            "decoding": {"attempts": 2, "backoff_s": 0.05, "timeout_s": 120},
        },
        source="bench",
    )


def _child(url: str, harness: str, episodes: int) -> dict[str, Any]:
    from bench._drive import drive_runner

    if harness == "langgraph":
        import runner.harness  # noqa: F401  (imports are not per-episode memory)
    base = status_bytes("VmRSS")
    g = harness_grid(url, harness, seeds=f"100-{99 + episodes // 2}", concurrency=episodes)

    async def main() -> Any:
        with scratch("harness-mem") as out:
            return await drive_runner(g, out, score=False)

    r = run_loop(main)
    return {"episodes": r.episodes, "peak": status_bytes("VmHWM"), "base": base}


def _memory(url: str, harness: str, episodes: int) -> float:
    args = [sys.executable, "-m", "bench.bench_harness", url, harness, str(episodes)]
    if CLIENT_CORE is not None:
        args.append(str(CLIENT_CORE))
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    m = json.loads(out.strip().splitlines()[-1])
    return float(m["peak"] - m["base"]) / 1024 / int(m["episodes"])


def run(quick: bool = False) -> dict[str, Any]:
    from bench._drive import drive_runner

    seeds = "100-103" if quick else "100-111"  # sized to run in under a minute here
    repeats = 1 if quick else 2
    mem_episodes = 32 if quick else 64
    per_turn: dict[str, list[float]] = {p: [] for p in PROTOCOLS}
    per_call: dict[str, list[float]] = {p: [] for p in PROTOCOLS}
    kib: dict[str, float] = {}
    with endpoint_process(server_config(), core=SERVER_CORE) as ep:
        grids = {p: harness_grid(ep.url, p, seeds=seeds, concurrency=64) for p in PROTOCOLS}

        async def once(p: str) -> None:
            with scratch("harness") as out:
                r = await drive_runner(grids[p], out, score=False)
            assert r.infrastructure == 0
            per_turn[p].append(1000.0 * r.cpu_s / r.turns)
            per_call[p].append(1000.0 * r.cpu_s / r.requests)

        async def main() -> None:
            for p in PROTOCOLS:  # warm-up: imports (LangGraph's), module caches
                # one seed: nothing cached is per episode, and the full grid's LangGraph
                # warm-up cost 4 s of the bench (#50)
                with scratch("harness") as out:
                    g1 = harness_grid(ep.url, p, seeds="100", concurrency=64)
                    await drive_runner(g1, out, score=False)
            for _ in range(repeats):
                for p in PROTOCOLS:
                    await once(p)

        run_loop(main)
        for p in PROTOCOLS:
            kib[p] = _memory(ep.url, p, mem_episodes)
    turn = {p: median(per_turn[p]) for p in PROTOCOLS}
    call = {p: median(per_call[p]) for p in PROTOCOLS}
    return {
        "case": "harness",
        "setup": f"zero latency, raw+checklist, S=10, perfect agent, seeds {seeds}, 64 in "
        f"flight, median of {repeats}; memory: {mem_episodes} episodes in flight",
        "rows": [
            row("client CPU ms per turn, text protocol", round(turn["text"], 3), "info", None),
            row("client CPU ms per turn, tool harness", round(turn["langgraph"], 3), "info", None),
            row(
                "harness / text CPU per turn",
                round(turn["langgraph"] / turn["text"], 2),
                "info",
                None,
            ),
            row("client CPU ms per agent call, text", round(call["text"], 3), "info", None),
            row("client CPU ms per agent call, harness", round(call["langgraph"], 3), "info", None),
            row("RSS KiB per episode in flight, text", round(kib["text"], 1), "info", None),
            row("RSS KiB per episode in flight, harness", round(kib["langgraph"], 1), "info", None),
        ],
        "ms_per_turn": per_turn,
        "ms_per_call": per_call,
        "kib_per_episode": kib,
    }


if __name__ == "__main__":
    from bench._common import pin

    if len(sys.argv) > 4:
        pin(int(sys.argv[4]))
    print(json.dumps(_child(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
