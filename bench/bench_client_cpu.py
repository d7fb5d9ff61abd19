"""Client CPU per turn: the runner process's CPU time per agent turn at zero endpoint latency.

The scripted endpoint answers at once in its own process on its own core; the runner (this
process, pinned to the other core) runs a grid of real episodes (raw and checklist arms,
S = 10, the perfect agent) exactly as ``ladder run`` does: episode generation, arms, the HTTP
client, the JSON-lines log writer and the streaming scorer. CPU time comes from the OS's
accounting (``getrusage``) of this process only. The runner and the bare loop alternate in
ABBA order (runner first in even repeats, the bare loop first in odd ones), so a drift in the
machine's load falls on both alike; the ratio is the median of the 12 per-repeat ratios, with
the ratio of the two minima beside it (the quietest statistic on a shared machine), the
range and the middle half of the per-repeat ratios in its label, and all of them in the JSON
(#50). A profiled extra repeat (not timed) splits
the CPU by package, to say what limits the rest; a profiled repeat of each counts the Python
function calls per turn, runner over the bare loop: a figure no load on a shared machine moves,
where the CPU ratio swings by 0.3 between repeats (#50).
"""

from __future__ import annotations

import cProfile
import pstats
from collections import Counter
from typing import Any

from bench._common import SERVER_CORE, grid, median, row, run_loop, scratch
from bench._drive import drive_runner
from bench._endpoint import endpoint_process, server_config
from bench._users import bare_aiohttp_agent, gather_all

__all__ = ["run"]

TARGET_X_BARE = 1.1  # the runner's client CPU per turn over a bare aiohttp loop's (#50)


def _package(filename: str) -> str:
    for part in ("aiohttp", "yarl", "multidict", "msgspec", "orjson", "anyio", "asyncio"):
        if f"/{part}/" in filename or f"{part}/" in filename:
            return "aiohttp" if part in ("yarl", "multidict") else part
    for own in ("runner", "protocol", "scoring", "serve"):
        if f"/{own}/" in filename:
            return own
    return "other"


def _shares(prof: cProfile.Profile) -> dict[str, float]:
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    agg: Counter[str] = Counter()
    for (filename, _, fn), (_, _, tottime, _, _) in stats.items():
        key = (
            _package(filename)
            if filename != "~"
            else ("orjson" if "orjson" in fn else "msgspec" if "msgspec" in fn else "builtins")
        )
        agg[key] += tottime
    total = sum(agg.values()) or 1.0
    return {k: round(v / total, 3) for k, v in agg.most_common()}


def _calls(prof: cProfile.Profile) -> int:
    """The function calls a profiled run made (Python and C): a count that no load on the
    machine moves, so a change in the client's work shows where CPU time is too noisy."""
    return int(pstats.Stats(prof).total_calls)  # type: ignore[attr-defined]


def run(quick: bool = False) -> dict[str, Any]:
    seeds = "100-163"  # quick too: the runner's set-up needs thousands of turns to spread over
    repeats = 1 if quick else 12  # 12 ABBA pairs (#50: 8 left the median 0.1 apart run to run)
    per_turn: list[float] = []
    per_turn_unscored: list[float] = []
    per_turn_bare: list[float] = []
    shares: dict[str, float] = {}
    calls: dict[str, float] = {}  # Python function calls per turn, profiled (no noise)
    turns = 0
    with endpoint_process(server_config(), core=SERVER_CORE) as ep:
        g = grid(ep.url, seeds=seeds, concurrency=64, max_in_flight=64)
        # the warm-up's grid (#50: it ran the whole grid, 5.6 s of the bench): imports and
        # module caches are paid on 16 episodes as on 128; nothing cached is per episode
        warm = grid(ep.url, seeds="100-107", concurrency=64, max_in_flight=64)

        async def once(score: bool, on: Any = g) -> float:
            nonlocal turns
            with scratch("cpu") as out:
                r = await drive_runner(on, out, score=score)
            assert r.infrastructure == 0, "infrastructure errors at zero latency"
            turns = r.turns
            return 1000.0 * r.cpu_s / r.turns

        async def bare(on: Any = g) -> float:
            with scratch("cpu-bare") as out:
                async with bare_aiohttp_agent(ep.url, "scripted/perfect", 400, 64) as (a, n):
                    u = await gather_all(on, a, n, out / "log.jsonl")
            assert u.infrastructure == 0, "infrastructure errors at zero latency"
            return 1000.0 * u.cpu_s / u.requests

        async def main() -> None:
            nonlocal shares, calls
            await once(True, warm)  # warm-up: imports, caches
            await bare(warm)
            for i in range(repeats):  # ABBA: the order alternates
                if i % 2 == 0:
                    per_turn.append(await once(True))
                    per_turn_bare.append(await bare())
                else:
                    per_turn_bare.append(await bare())
                    per_turn.append(await once(True))
                if i % 6 == 0 or quick:  # the scorer's share (info): twice in 12 (#50: was 3)
                    per_turn_unscored.append(await once(False))
            prof = cProfile.Profile()
            prof.enable()
            await once(True)
            prof.disable()
            shares = _shares(prof)
            calls["runner"] = _calls(prof) / turns
            prof = cProfile.Profile()  # the bare loop's, for the calls per turn (#50)
            prof.enable()
            await bare()
            prof.disable()
            calls["bare"] = _calls(prof) / turns

        run_loop(main)
    ms = median(per_turn)
    ms_unscored = median(per_turn_unscored)
    ms_bare = median(per_turn_bare)
    ratios = sorted(a / b for a, b in zip(per_turn, per_turn_bare, strict=True))
    ratio = median(ratios)
    quarter = len(ratios) // 4  # the middle half of the per-repeat ratios: their spread
    middle = ratios[quarter : len(ratios) - quarter] or ratios
    ratio_of_minima = min(per_turn) / min(per_turn_bare)
    return {
        "case": "client_cpu",
        "setup": f"zero latency, raw+checklist, S=10, perfect agent, {turns} turns per repeat, "
        f"64 in flight, median of {repeats}; the bare loop: gather + semaphore over a plain "
        "aiohttp session on the same episodes, alternating ABBA",
        "rows": [
            row("client CPU ms per agent turn", round(ms, 4), "info", None),
            row("bare aiohttp loop CPU ms per turn (calibration)", round(ms_bare, 4), "info", None),
            row(
                "runner / bare aiohttp loop CPU per turn",
                round(ratio, 3),
                f"<= {TARGET_X_BARE}",
                ratio <= TARGET_X_BARE,
            ),
            row(
                f"  the same, min / min (per-repeat ratios {ratios[0]:.3f}-{ratios[-1]:.3f}, "
                f"middle half {middle[0]:.3f}-{middle[-1]:.3f})",
                round(ratio_of_minima, 3),
                "info",
                None,
            ),
            row(
                "function calls per turn, runner / bare loop (profiled, load-free)",
                round(calls["runner"] / calls["bare"], 3),
                "info",
                None,
            ),
            row("turns/s one core drives", round(1000.0 / ms), "info", None),
            row(
                "client CPU ms per turn, streaming scorer off",
                round(ms_unscored, 4),
                "info",
                None,
            ),
        ],
        "ratios": ratios,
        "ratio_middle_half": [middle[0], middle[-1]],
        "ms_per_turn_bare": per_turn_bare,
        "ms_per_turn": per_turn,
        "ms_per_turn_unscored": per_turn_unscored,
        "cpu_share_by_package": shares,
        "calls_per_turn": {k: round(v, 1) for k, v in calls.items()},
    }
