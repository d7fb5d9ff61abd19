"""Soak (slow): 2,000 episodes in flight against the scripted endpoint with 5% mixed faults
for at least two minutes, then the run is cancelled (as a Ctrl-C would) and must unwind
cleanly. Memory (VmRSS from /proc/self/status), open descriptors (/proc/self/fd) and
throughput at the end are printed against the start, and checked for leaks: descriptors
return to where they were, nothing is logged twice, and the logs read back whole.

Throughput is counted three ways: chat calls answered per second, the transcript messages
those calls carried per second, and episodes logged per second. An episode needs 44 agent
calls (and a matcher call on most turns in the directive arm), so with 2,000 in flight the
first episodes end only after the first 100,000 or so calls; the grid is far longer than the
soak, so from then on episodes end as fast as others start.

"Throughput holds up" compares like with like: all 2,000 episodes start together, so the
early window holds short transcripts only and, on a machine slow enough that no episode has
ended yet, the late window long ones only. A call carries its whole transcript, and the
embedded endpoint (in this process) reads all of it, so calls/s alone would fall with the
transcript's length on a slow machine and not on a fast one. The check is on messages
carried per second, which a cost growing with the transcript leaves level and a leak or a
stall still drags down; calls/s is printed beside it.
``SOAK_S`` (seconds, default 240) sets the length; run it alone:
``python -m pytest tests/integration/test_reliability_soak.py -m slow -o addopts='' -q``.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import runner.execution.scheduler as scheduler
from runner.client.endpoint import Endpoint
from runner.execution.episode_loop import run_episode
from runner.rundir.logs import LogReport, LogWriter, read_logs
from serve.config import FaultConfig, ServerConfig
from tests.reliability_kit import INFRA, make_grid, raw_completed_counts, run_inprocess

SOAK_S = float(os.environ.get("SOAK_S", "240"))
CONCURRENCY = 2000
WINDOW_S = 30.0
SYNTH = "scripted/synthetic?obey=0.9&fresh=0.35&seed=7"
FAULTS = FaultConfig(  # 5% of requests in all
    rate_429=0.01,
    rate_500=0.0075,
    rate_503=0.0075,
    rate_drop=0.0075,
    rate_hang=0.0025,
    rate_malformed=0.0075,
    rate_empty_thinking=0.0075,
    retry_after_s=0.2,
    hang_s=5.0,
)


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@dataclass
class Sample:
    t: float
    rss_kb: int
    fds: int
    calls: int
    messages: int
    logged: int
    in_flight: int


@dataclass
class Probe:
    """Counts calls answered, episodes logged and episodes in flight; samples each second."""

    calls: int = 0
    messages: int = 0  # transcript messages the answered calls carried
    logged: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    all_in_flight: float | None = None  # when CONCURRENCY episodes were first in flight
    t0: float = field(default_factory=time.perf_counter)
    samples: list[Sample] = field(default_factory=list)

    def sample(self) -> Sample:
        s = Sample(
            time.perf_counter() - self.t0,
            _rss_kb(),
            _fds(),
            self.calls,
            self.messages,
            self.logged,
            self.in_flight,
        )
        self.samples.append(s)
        return s

    async def run(self) -> None:
        while True:
            self.sample()
            await asyncio.sleep(1.0)

    def at(self, t: float) -> Sample:
        return next(s for s in self.samples if s.t >= t)

    def rates(self, start: float, end: float) -> tuple[float, float, float]:
        """(calls/s, messages carried/s, episodes/s) between two sample times."""
        a, b = self.at(start), [s for s in self.samples if s.t <= end][-1]
        span = max(1e-9, b.t - a.t)
        return (
            (b.calls - a.calls) / span,
            (b.messages - a.messages) / span,
            (b.logged - a.logged) / span,
        )


def _install(probe: Probe, monkeypatch: pytest.MonkeyPatch) -> None:
    # scheduler calls runner.execution.episode_loop.run_episode: counted_episode wraps that one
    write, chat = LogWriter.write, Endpoint.chat

    async def counted_chat(self: Endpoint, *args: Any, **kw: Any) -> Any:
        reply = await chat(self, *args, **kw)
        probe.calls += 1
        probe.messages += len(kw["messages"] if "messages" in kw else args[1])
        return reply

    def counted_write(self: LogWriter, record: Any) -> None:
        write(self, record)
        probe.logged += 1

    async def counted_episode(ctx: Any) -> Any:
        probe.in_flight += 1
        probe.peak_in_flight = max(probe.peak_in_flight, probe.in_flight)
        if probe.in_flight == CONCURRENCY and probe.all_in_flight is None:
            probe.all_in_flight = time.perf_counter() - probe.t0
        try:
            return await run_episode(ctx)
        finally:
            probe.in_flight -= 1

    monkeypatch.setattr(Endpoint, "chat", counted_chat)
    monkeypatch.setattr(LogWriter, "write", counted_write)
    monkeypatch.setattr(scheduler, "run_episode", counted_episode)


@pytest.mark.slow
async def test_soak(tmp_path: Path, monkeypatch: Any, capsys: Any) -> None:
    models = [
        {"name": "agent", "served": SYNTH, "endpoint": "embedded"},
        {
            "name": "thinker",
            "served": SYNTH,
            "endpoint": "embedded",
            "regime": "thinking",
            "select": "request",
        },
    ]
    grid = make_grid(
        seeds="1000-3999",  # 12,000 episodes: more than the soak can run
        steps=5,
        arms=("raw", "directive"),
        models=models,
        concurrency=CONCURRENCY,
        max_in_flight=512,
        adaptive=False,  # a fixed cap: the CPU, not the AIMD limit under 1% 429s, is the bound
        timeout_s=2.0,
        attempts=6,
        backoff_s=0.05,
    )
    out = tmp_path / "soak"
    probe = Probe()
    _install(probe, monkeypatch)
    before = (_rss_kb(), _fds())
    sampler = asyncio.ensure_future(probe.run())
    config = ServerConfig(faults=FAULTS, seed=1, shutdown_timeout_s=0.2)
    with pytest.raises(TimeoutError):  # the grid is far longer than the soak: cancel it
        await asyncio.wait_for(run_inprocess(grid, out, config, check=False), SOAK_S)
    end = probe.samples[-1]  # the last sample while the run was still running
    sampler.cancel()
    after = (_rss_kb(), _fds())

    report = LogReport()
    recs = read_logs(out, report)
    assert not report.corrupt and not report.truncated, "a cancel leaves whole lines"
    assert all(n == 1 for n in raw_completed_counts(out).values()), "nothing logged twice"
    infra = [r for r in recs.values() if r.termination != "completed"]
    assert all(r.termination in INFRA and r.attempts >= 1 and r.error for r in infra)

    assert probe.all_in_flight is not None, "2,000 episodes were in flight at once"
    t_start = probe.all_in_flight + 20.0  # after the precompile, with every episode under way
    start = probe.at(t_start)
    first = next((s for s in probe.samples if s.logged > 0), end)
    calls_early, messages_early, _ = probe.rates(t_start, t_start + WINDOW_S)
    calls_late, messages_late, eps_late = probe.rates(end.t - WINDOW_S, end.t)
    lines = [
        f"soak: {end.t:.0f} s, {CONCURRENCY} episodes in flight from {probe.all_in_flight:.0f} s "
        f"(after the precompile), 5% mixed faults, {probe.calls} calls answered; "
        f"{len(recs)} episodes logged ({len(infra)} on infrastructure errors), the first at "
        f"{first.t:.0f} s",
        f"{'':16}{'before':>9}{'start':>9}{'end':>9}{'after cancel':>14}",
        f"{'RSS MiB':16}{before[0] / 1024:>9.0f}{start.rss_kb / 1024:>9.0f}"
        f"{end.rss_kb / 1024:>9.0f}{after[0] / 1024:>14.0f}",
        f"{'open fds':16}{before[1]:>9}{start.fds:>9}{end.fds:>9}{after[1]:>14}",
        f"{'calls/s (30 s)':16}{'':>9}{calls_early:>9.0f}{calls_late:>9.0f}",
        f"{'messages/s':16}{'':>9}{messages_early:>9.0f}{messages_late:>9.0f}"
        f"   (per call: {messages_early / max(1.0, calls_early):.1f} -> "
        f"{messages_late / max(1.0, calls_late):.1f})",
        f"{'episodes/s':16}{'':>9}{'-':>9}{eps_late:>9.1f}",
        f"(start: {t_start:.0f} s, 20 s after all {CONCURRENCY} episodes were in flight; "
        f"end: the last sample before the cancel; rates over {WINDOW_S:.0f} s windows)",
    ]
    with capsys.disabled():
        print("\n" + "\n".join(lines), flush=True)
    assert end.t - probe.all_in_flight >= 120, "two minutes with every episode in flight"
    assert probe.peak_in_flight == CONCURRENCY
    assert len(recs) > 0 and eps_late > 0, "episodes end while others run"
    assert after[1] <= before[1] + 4, "descriptors are released when the run ends"
    assert end.fds <= start.fds + 16, "descriptors do not grow while the run goes on"
    assert messages_late >= 0.5 * messages_early, "throughput holds up (like with like)"
    assert end.rss_kb <= 3 * start.rss_kb, "memory does not run away"
