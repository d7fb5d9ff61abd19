"""The saturation case's control (#50): a bare aiohttp loop on the same episodes, server and
window rule as the runner. No timing asserts: the figures' values belong in bench/."""

from __future__ import annotations

from typing import Any

import pytest

from bench import bench_saturation


def _figure(cap: int, utilization: float, client_cap: int | None = None) -> dict[str, Any]:
    return {
        "cap": cap,
        "client_cap": client_cap or cap,
        "mode": "fixed",
        "L_s": 0.5,
        "utilization": utilization,
        "utilization_counted": utilization,
        "ramp_s": 0.6,
        "warmup_s": 2.0,
        "lost": {},
    }


def test_the_ratio_row_is_the_runners_achieved_over_the_bare_loops() -> None:
    rows = bench_saturation._bare_rows(_figure(256, 0.9801), _figure(256, 0.9900))
    assert [r["figure"] for r in rows] == [
        "C=256 fixed L=0.5s, bare aiohttp loop, semaphore C: achieved/ideal",
        "C=256 fixed L: runner / bare aiohttp loop achieved",
    ]
    assert rows[0]["value"] == 0.99 and rows[0]["target"] == "info" and rows[0]["holds"] is None
    assert rows[1]["value"] == 0.99 and rows[1]["target"] == ">= 0.99" and rows[1]["holds"]
    short = bench_saturation._bare_rows(_figure(256, 0.97), _figure(256, 0.99))
    assert short[1]["value"] == 0.9798 and short[1]["holds"] is False


@pytest.mark.parametrize("quick", [True, False])
def test_the_control_runs_beside_the_runners_limit_c_run(
    monkeypatch: pytest.MonkeyPatch, quick: bool
) -> None:
    ran: list[tuple[int, float, int]] = []

    def one(cap: int, mode: str, base: float, *rest: Any) -> dict[str, Any]:
        return {**_figure(cap, 0.98, rest[-1]), "mode": mode, "L_s": base}

    def bare(cap: int, seconds: float, episodes: int) -> dict[str, Any]:
        ran.append((cap, seconds, episodes))
        return {**_figure(cap, 0.98), "L_s": seconds}

    monkeypatch.setattr(bench_saturation, "_one", one)
    monkeypatch.setattr(bench_saturation, "_bare", bare)
    result = bench_saturation.run(quick=quick)
    figures = [r["figure"] for r in result["rows"]]
    cap, seconds = (64, 0.15) if quick else (256, 0.5)
    assert ran == [(cap, seconds, cap + cap // 8)]  # the runner's episodes, its server
    assert f"C={cap} fixed L={seconds:g}s, bare aiohttp loop, semaphore C: achieved/ideal" in (
        figures
    )
    assert f"C={cap} fixed L: runner / bare aiohttp loop achieved" in figures
    heads = [f for f in figures if not f.startswith(" ")]  # the control follows its runner run
    at = heads.index(f"C={cap} fixed L={seconds:g}s, limit C: achieved/ideal")
    assert heads[at + 1].startswith(f"C={cap} fixed L={seconds:g}s, bare aiohttp loop")
    assert len(result["bare_runs"]) == 1


def test_the_bare_loop_is_measured_in_the_runners_window() -> None:
    """A real endpoint process (cap 8, fixed 0.1 s) and the bare loop on 10 episodes: it
    stops once fewer than C episodes remain, and its window is read as the runner's is."""
    r = bench_saturation._bare(8, 0.1, 10)
    assert r["client"] == "bare aiohttp loop" and r["infrastructure"] == 0
    assert 10 - r["episodes"] < 8  # run until fewer than C episodes remain
    assert 0 < r["window_requests"] <= r["requests"]
    assert r["window_s"] > 0 and r["utilization"] > 0
    assert r["ideal_rps"] == round(8 / 0.1, 1)
