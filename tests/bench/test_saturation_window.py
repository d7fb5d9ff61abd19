"""The saturation figure's statistic (#50): the server's busy slot-seconds in the window over
its capacity, each request's service clipped to the window, so the window has no edges to
cut; checked on synthetic traces against the old statistic (requests counted whole from the
sampled counters). And the client's hand-off and turnaround stamps on a real limiter."""

from __future__ import annotations

import asyncio

import pytest

from bench import bench_saturation
from bench._drive import RunResult
from bench._trace import TracedLimiter, busy_share, phase_shares, ramp_s, turnarounds

CAP, L = 8, 0.5


def _waves(gap: float, waves: int) -> dict[str, list[float]]:
    """C requests a wave, every slot serving L then idle ``gap`` (perfect waves)."""
    period = L + gap
    starts = [k * period for k in range(waves) for _ in range(CAP)]
    return {
        "arrival": list(starts),
        "start": starts,
        "due": [s + L for s in starts],
        "end": [s + L for s in starts],
    }


def _run(server: dict[str, list[float]], every: float = 0.1, phase: float = 0.03) -> RunResult:
    """A run whose counters were sampled every ``every`` s from ``phase``: the requests
    answered (each at its ``due``), no tokens, no episode done (the window runs to the end)."""
    last = max(server["due"])
    samples: list[tuple[float, tuple[float, ...]]] = []
    t = phase
    while t <= last:
        done = sum(d <= t for d in server["due"])
        samples.append((t, (float(done), 0.0, 0.0, 0.0, 0.0, 0.0)))
        t += every
    n = len(server["start"])
    return RunResult(
        wall_s=last,
        cpu_s=0.0,
        episodes=0,
        turns=n,
        requests=n,
        prompt_tokens=0,
        completion_tokens=0,
        infrastructure=0,
        peak_in_flight=CAP,
        samples=samples,
        started=0.0,
    )


@pytest.mark.parametrize("phase", [0.0, 0.03, 0.071])
def test_perfect_waves_read_one_exactly_and_the_old_count_does_not(phase: float) -> None:
    server = _waves(0.0, 40)
    fig = bench_saturation._figures(_run(server, phase=phase), (L, 0.0, 0.0), CAP, 2 * CAP, server)
    assert fig["utilization"] == 1.0  # rounded to 4 places; the sum itself:
    assert busy_share(server, CAP, fig["t0"], fig["t1"]) == pytest.approx(1.0, abs=1e-12)
    # the old statistic counts a wave's C replies whole or not at all
    if phase:
        assert abs(fig["utilization_counted"] - 1.0) > 0.01
    assert fig["ramp_s"] == 0.0 and fig["warmup_s"] >= 2.0


@pytest.mark.parametrize("phase", [0.0, 0.013, 0.047, 0.09])
def test_waves_with_a_turnaround_read_their_share_within_one_gap_per_end(phase: float) -> None:
    gap = 0.005  # 5 ms a wave: the slots compute L / (L + gap) of the time
    server = _waves(gap, 60)
    fig = bench_saturation._figures(_run(server, phase=phase), (L, 0.0, 0.0), CAP, 2 * CAP, server)
    t0, t1 = fig["t0"], fig["t1"]
    share = busy_share(server, CAP, t0, t1)
    assert abs(share - L / (L + gap)) <= 2 * gap / (t1 - t0)
    period = L + gap  # a window of whole periods from a wave's start reads it exactly
    assert busy_share(server, CAP, 3 * period, 40 * period) == pytest.approx(L / period, abs=1e-12)


def test_a_request_counts_only_its_service_inside_the_window() -> None:
    server = {"start": [0.0, 1.0, 2.5], "due": [1.0, 3.0, 2.75]}
    # [0.5, 2.5]: half of the first, 1.5 of the second, none of the third; 2 slots
    assert busy_share(server, 2, 0.5, 2.5) == pytest.approx((0.5 + 1.5) / 4.0)


def test_the_ramp_ends_when_the_level_is_first_reached() -> None:
    server = {"start": [1.0, 1.2, 1.4, 1.9], "due": [2.0, 2.2, 1.5, 2.9]}
    assert ramp_s(server, 3, 0.5) == pytest.approx(0.9)  # the third starts at 1.4
    assert ramp_s(server, 4, 0.5) is None  # the third is done (1.5) before the fourth (1.9)


def test_the_limiter_stamps_a_hand_off_and_each_episodes_turnaround() -> None:
    """Two tasks on a limit of one: the second waits, the first's release hands it the slot;
    the first asks again after its reply's processing (here a sleep) and waits in turn."""
    limiter = TracedLimiter(1)

    async def episode(turns: int, think: float) -> None:
        for _ in range(turns):
            if not limiter.try_acquire():
                await limiter.acquire()
            await asyncio.sleep(0.01)  # the request in flight
            limiter.release()
            await asyncio.sleep(think)  # the reply's processing, the next turn

    async def main() -> None:
        await asyncio.gather(episode(3, 0.002), episode(3, 0.002))

    asyncio.run(main())
    assert len(limiter.cycles) == 2 and all(len(c) == 3 for c in limiter.cycles.values())
    for cycle in limiter.cycles.values():
        for asked, resumed, released in cycle:
            assert asked <= resumed < released
    got = turnarounds(limiter, 0.0, float("inf"))
    assert got["hand_offs"] == len(limiter.woken_resumed) >= 3
    assert got["turnarounds"] == 4  # two per episode: between its three requests
    assert 1.5 <= got["turnaround_ms_median"] <= got["turnaround_ms_p99"]
    assert 0 <= got["hand_off_ms_median"] <= got["hand_off_ms_p99"]
    shares = phase_shares(limiter, _waves(0.0, 1), 1, limiter.grant[0], limiter.release_at[-1])
    assert "limiter hand-off (slot granted -> waiter resumes)" in shares
