"""Per-arm cost (the paper's Table 7 shape), computed from logged call records. Pure."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

from protocol.records import CellKey, EpisodeRecord

__all__ = ["cost_rows"]


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _config(cell: CellKey) -> tuple[object, ...]:
    return (cell.model, cell.regime, cell.steps, cell.density, cell.domain, cell.brief)


def cost_rows(records: Iterable[EpisodeRecord]) -> list[dict[str, Any]]:
    """One row per cell: tokens, calls and latency per episode and per turn.

    Agent tokens are the agent's calls only (as in Table 7); helper (matcher, compiler)
    tokens and calls are reported apart; cached helper calls count as calls saved, not made.
    ``x_raw`` is the cell's total agent tokens as a multiple of the raw arm of the same
    configuration (None without a raw cell).
    """
    by_cell: dict[CellKey, list[EpisodeRecord]] = {}
    for r in records:
        if r.termination == "completed":
            by_cell.setdefault(r.cell, []).append(r)
    rows: list[dict[str, Any]] = []
    for cell, recs in by_cell.items():
        n = len(recs)
        agent_p = agent_c = helper_t = agent_calls = helper_calls = cached = 0
        turn_lat: list[float] = []
        ep_lat: list[float] = []
        for r in recs:
            total = 0.0
            for t in r.turns:
                lat = 0.0
                for c in t.calls:
                    if c.cached:
                        cached += 1
                        continue
                    lat += c.wait_s + c.server_s
                    if c.role == "agent":
                        agent_calls += 1
                        agent_p += c.prompt_tokens
                        agent_c += c.completion_tokens
                    else:
                        helper_calls += 1
                        helper_t += c.prompt_tokens + c.completion_tokens
                turn_lat.append(lat)
                total += lat
            ep_lat.append(total)
        rows.append(
            {
                "cell": cell,
                "n": n,
                "prompt_tokens": agent_p / n,
                "completion_tokens": agent_c / n,
                "total_tokens": (agent_p + agent_c) / n,
                "helper_tokens": helper_t / n,
                "agent_calls": agent_calls / n,
                "helper_calls": helper_calls / n,
                "helper_calls_cached": cached / n,
                "turn_latency_s": {
                    "mean": statistics.fmean(turn_lat) if turn_lat else 0.0,
                    "median": statistics.median(turn_lat) if turn_lat else 0.0,
                    "p95": _pct(turn_lat, 0.95),
                },
                "episode_latency_s": {
                    "mean": statistics.fmean(ep_lat),
                    "median": statistics.median(ep_lat),
                    "p95": _pct(ep_lat, 0.95),
                },
            }
        )
    raw = {_config(row["cell"]): row["total_tokens"] for row in rows if row["cell"].arm == "raw"}
    for row in rows:
        base = raw.get(_config(row["cell"]))
        row["x_raw"] = row["total_tokens"] / base if base else None
    rows.sort(key=lambda row: (_config(row["cell"]), row["cell"].arm))
    return rows
