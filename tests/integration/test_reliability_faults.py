"""Fault suite: a grid against the scripted endpoint with injected faults completes, every
episode is either completed or logged with an infrastructure termination reason and its
attempts, and the completed episodes score exactly as in a fault-free run of the same seeds
(the scripted agents are deterministic functions of the request's messages).

Faults, each alone and all mixed: 429 with Retry-After, 500, 503, dropped connections, hangs
past the client's timeout, malformed JSON bodies, empty thinking replies, context-length
errors, and malformed matcher JSON (the gate's matcher asks once for a correction).
The adaptive concurrency limit backs off under 429 and recovers.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import web

from protocol.records import MODEL_FAILURES, EpisodeRecord
from runner.client.endpoint import Endpoint
from runner.client.limiter import Limiter
from runner.execution.grid_run import RunSummary
from runner.grid.expand import Grid
from serve.config import FaultConfig, ServerConfig
from serve.faults.rates import draw
from tests.fakes import Script, fake_endpoint, ok, status
from tests.reliability_kit import (
    INFRA,
    LimitHistory,
    make_grid,
    records,
    run_inprocess,
    verdicts,
)

SYNTH = "scripted/synthetic?obey=0.9&fresh=0.35&seed=7"
# The same agent in both regimes; labels stay fixed while the served name may carry
# helper-defect parameters, so cell slugs match the fault-free run's.
MODELS: list[dict[str, Any]] = [
    {"name": "agent", "served": SYNTH, "endpoint": "embedded"},
    {
        "name": "thinker",
        "served": SYNTH,
        "endpoint": "embedded",
        "regime": "thinking",
        "select": "request",
    },
]
SEEDS = "100-101"
ATTEMPTS = 4
TIMEOUT_S = 0.4  # a hang (hang_s below) always runs past it

Records = dict[tuple[str, int], EpisodeRecord]


def _grid(models: list[dict[str, Any]] = MODELS, **kw: Any) -> Any:
    return make_grid(seeds=SEEDS, models=models, attempts=ATTEMPTS, timeout_s=TIMEOUT_S, **kw)


def _server(faults: FaultConfig | None = None, **kw: Any) -> ServerConfig:
    return ServerConfig(faults=faults or FaultConfig(), shutdown_timeout_s=0.1, **kw)


def _run(
    grid: Grid, out: Path, config: ServerConfig, check: bool = True
) -> tuple[RunSummary, Records]:
    summary, _ = asyncio.run(run_inprocess(grid, out, config, check=check))
    return summary, records(out)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Records:
    """The fault-free run every faulty run is compared with."""
    out = tmp_path_factory.mktemp("baseline")
    summary, recs = _run(_grid(), out, _server())
    assert summary["infrastructure"] == 0
    assert all(r.termination == "completed" for r in recs.values())
    return recs


def _at_ceiling(rec: EpisodeRecord) -> bool:
    """A thinking reply still empty at the 12,000-token ceiling (from logs written before
    #36, when the client kept it as the model's answer; now it is retried and, empty on every
    attempt, ends the episode as ``empty_reply``)."""
    return any(
        not t.reply and any(c.role == "agent" and c.max_tokens == 12_000 for c in t.calls)
        for t in rec.turns
    )


def _check_run(summary: RunSummary, recs: Records, baseline: Records) -> tuple[int, int]:
    """The invariants of every faulty run; (completed, infrastructure) counts."""
    assert recs.keys() == baseline.keys(), "every (cell, seed) is logged"
    ended = [r for r in recs.values() if r.termination != "completed"]
    for r in ended:
        assert r.termination in INFRA
        assert r.attempts >= 1 and r.error, (r.termination, r.error, r.attempts)
    # a context overflow is the model's failure (#40): counted apart, never retried
    infra = [r for r in ended if r.termination not in MODEL_FAILURES]
    assert summary["infrastructure"] == len(infra)
    assert summary["model_failures"] == len(ended) - len(infra)
    assert summary["episodes_run"] == len(recs)
    faulty, clean = verdicts(recs), verdicts(baseline)
    for key, scored in faulty.items():
        if _at_ceiling(recs[key]):
            continue
        assert scored == clean[key], f"{key}: a completed episode scores differently under faults"
    return len(faulty), len(infra)


def _retried_calls(recs: Records) -> int:
    return sum(
        c.attempts > 1
        for r in recs.values()
        if r.termination == "completed"
        for t in r.turns
        for c in t.calls
    )


SINGLE = {
    "429": FaultConfig(rate_429=0.2, retry_after_s=0.01),
    "500": FaultConfig(rate_500=0.2),
    "503": FaultConfig(rate_503=0.2),
    "drop": FaultConfig(rate_drop=0.2),
    "hang": FaultConfig(rate_hang=0.03, hang_s=3.0),
    "malformed": FaultConfig(rate_malformed=0.2),
    "empty_thinking": FaultConfig(rate_empty_thinking=0.2),
}


@pytest.mark.parametrize("fault", list(SINGLE))
def test_each_fault_alone(fault: str, baseline: Records, tmp_path: Path, monkeypatch: Any) -> None:
    hist = LimitHistory().install(monkeypatch)
    config = _server(SINGLE[fault])
    summary, recs = _run(_grid(), tmp_path, config, check=False)
    completed, _ = _check_run(summary, recs, baseline)
    assert completed > 0
    assert _retried_calls(recs) > 0, "the fault was injected and survived by a retry"
    if fault == "empty_thinking":
        budgets = {
            c.max_tokens
            for r in recs.values()
            if r.cell.regime == "thinking"
            for t in r.turns
            for c in t.calls
            if c.role == "agent"
        }
        assert 5000 in budgets, "an empty thinking reply is retried with the budget doubled"
        assert sum(map(_at_ceiling, recs.values())) < len(recs) / 2
    if fault == "hang":
        timed_out = [r for r in recs.values() if r.termination == "timeout"]
        assert all("timed out" in (r.error or "") for r in timed_out)
    if fault == "429":
        assert hist.throttles > 0 and min(hist.limits) < 16


def test_all_faults_mixed_with_the_preflight(
    baseline: Records, tmp_path: Path, monkeypatch: Any
) -> None:
    """All faults at once, the preflight included: the first request (the preflight's probe)
    draws a fault, and a transient fault there must not refuse the grid."""
    hist = LimitHistory().install(monkeypatch)
    mixed = FaultConfig(
        rate_429=0.04,
        rate_500=0.04,
        rate_503=0.04,
        rate_drop=0.04,
        rate_hang=0.01,
        rate_malformed=0.04,
        rate_empty_thinking=0.04,
        retry_after_s=0.01,
        hang_s=3.0,
    )
    seed = next(
        s
        for s in range(1000)
        if draw(mixed, s, 0) not in (None, "empty_thinking", "hang") and draw(mixed, s, 1) is None
    )
    config = _server(mixed, seed=seed)
    summary, recs = _run(_grid(), tmp_path, config, check=True)
    completed, infra = _check_run(summary, recs, baseline)
    assert completed > 0 and _retried_calls(recs) > 0
    assert hist.throttles > 0
    # Resume retries only the infrastructure failures, and they then score as fault-free.
    summary2, recs2 = _run(_grid(), tmp_path, _server(), check=True)
    assert summary2["already_done"] == completed and summary2["episodes_run"] == infra
    assert verdicts(recs2) == verdicts(baseline)


def test_context_length_errors(baseline: Records, tmp_path: Path) -> None:
    """A context limit that the thinking replies' 2,500-token budget overruns: the budget is
    halved down to the 512 floor; an episode whose prompt outgrows even that ends with
    ``context_overflow`` (no-think replies at 400 tokens are already under the floor)."""
    config = _server(max_model_len=4000)
    summary, recs = _run(_grid(), tmp_path, config, check=False)
    completed, infra = _check_run(summary, recs, baseline)
    overflow = [r for r in recs.values() if r.termination == "context_overflow"]
    assert overflow and infra == 0 and summary["model_failures"] == len(overflow)
    assert all("context length" in (r.error or "") for r in overflow)
    halved = {
        c.max_tokens
        for r in recs.values()
        if r.termination == "completed" and r.cell.regime == "thinking"
        for t in r.turns
        for c in t.calls
        if c.role == "agent"
    }
    assert halved & {1250, 625, 512}, "completed thinking episodes ran on a halved budget"
    assert completed > 0


def test_malformed_matcher_json(baseline: Records, tmp_path: Path) -> None:
    """The matcher's JSON is malformed at a rate; the gate asks once for a correction. No
    episode ends on it (it is the model's answer, not an infrastructure error); wherever
    every matcher answer came out as in the fault-free run, the episode scores the same."""
    served = SYNTH + "&matcher_malformed=0.3"
    models = [{**m, "served": served} for m in MODELS]
    summary, recs = _run(_grid(models), tmp_path, _server(), check=False)
    assert summary["infrastructure"] == 0 and recs.keys() == baseline.keys()
    retried = same = 0
    faulty, clean = verdicts(recs), verdicts(baseline)
    for key, rec in recs.items():
        for t in rec.turns:
            retried += sum(c.role == "matcher" and not c.cached for c in t.calls) > 1
        matched = [(t.matched_step, t.matched_redo) for t in rec.turns]
        if matched == [(t.matched_step, t.matched_redo) for t in baseline[key].turns]:
            same += 1
            assert faulty[key] == clean[key], key
    assert retried > 0, "malformed matcher replies were answered with a correction request"
    assert same > 0


def test_a_cell_whose_every_episode_fails_does_not_stop_the_run(tmp_path: Path) -> None:
    """A model the endpoint does not serve: every episode of its cells ends with
    ``client_error`` at once (no retries), the other model's cells complete, the run ends."""
    models = [
        MODELS[0],
        {"name": "ghost", "served": "scripted/no-such-policy", "endpoint": "embedded"},
    ]
    grid = make_grid(seeds=SEEDS, models=models, arms=("raw", "checklist"), attempts=ATTEMPTS)
    summary, recs = _run(grid, tmp_path, _server(), check=False)
    ghosts = [r for r in recs.values() if r.cell.model == "ghost"]
    assert ghosts and all(r.termination == "client_error" and r.attempts == 1 for r in ghosts)
    assert all(r.termination == "completed" for r in recs.values() if r.cell.model != "ghost")
    assert summary["infrastructure"] == len(ghosts)
    results = (tmp_path / "results.jsonl").read_text().splitlines()
    assert any('"infrastructure_errors":2' in line for line in results)


# --- the adaptive limit, deterministically ------------------------------------------------


async def test_adaptive_limit_backs_off_under_429_and_recovers(monkeypatch: Any) -> None:
    """40 requests answered 429 (Retry-After: 0), then plain answers: the limit halves down
    to 1, then climbs back to its maximum while requests queue; nothing is lost."""
    hist = LimitHistory().install(monkeypatch)
    throttle = status(429, headers={"Retry-After": "0"})
    script = Script(*[throttle] * 40, *[ok("fine")] * 2000)
    msg = [{"role": "user", "content": "hi"}]
    async with (
        fake_endpoint(script) as url,
        Endpoint(
            [url],
            max_in_flight=16,
            adaptive=True,
            backoff_s=0.001,
            timeout_s=5,
            attempts=40,
        ) as ep,
    ):
        replies = await asyncio.gather(*(ep.chat("m", msg, max_tokens=5) for _ in range(600)))
    assert all(r.content == "fine" for r in replies)
    low = hist.limits.index(min(hist.limits))
    assert min(hist.limits) == 1 and hist.throttles == 40
    assert max(hist.limits[low:]) == 16, f"recovered to the maximum: {hist.limits[low:]}"
    assert ep.limiter.in_flight == 0 and ep.limiter.peak <= 16


async def test_a_cancelled_waiter_that_a_release_already_dropped() -> None:
    """Cancelling a run (Ctrl-C, a soak's end) cancels episodes waiting for a slot; a release
    in between drops the cancelled waiter first. The cancel must stay a plain cancel."""
    lim = Limiter(1)
    await lim.acquire()
    waiter = asyncio.ensure_future(lim.acquire())
    await asyncio.sleep(0)
    waiter.cancel()  # cancels the future it waits on at once...
    lim.release()  # ...and this release pops that future before the waiter resumes
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert lim.in_flight == 0 and lim.waiting == 0
    await asyncio.wait_for(lim.acquire(), 1)


async def test_odd_bodies_and_transient_4xx_are_retried() -> None:
    """Bodies that parse but hold no usable choice, and a proxy's 408 / a 409, are retried
    like a malformed body or a 5xx; they used to crash the run or fail the episode."""
    odd = [
        lambda b: web.json_response({"choices": [None]}),
        lambda b: web.json_response({"choices": {"0": {}}}),
        lambda b: web.json_response(["choices"]),
        status(408),
        status(409),
    ]
    script = Script(*odd, ok("fine"))
    async with fake_endpoint(script) as url, Endpoint([url], backoff_s=0.001, attempts=6) as ep:
        reply = await ep.chat("m", [{"role": "user", "content": "hi"}], max_tokens=5)
    assert reply.content == "fine" and reply.call.attempts == 6


def test_an_endpoint_that_fails_everything(tmp_path: Path) -> None:
    """Every request answered 503: the precompile batch, every compile and every agent call
    fail; the grid still ends, each episode logged as ``endpoint_error`` with its attempts,
    and every cell's result line reports infrastructure errors with no rate."""
    summary, recs = _run(_grid(), tmp_path, _server(FaultConfig(rate_503=1.0)), check=False)
    assert summary["infrastructure"] == summary["episodes_run"] == len(recs) > 0
    assert {(r.termination, r.attempts) for r in recs.values()} == {("endpoint_error", ATTEMPTS)}
    assert all("HTTP 503" in (r.error or "") for r in recs.values())
    cells = [
        line
        for line in map(orjson.loads, (tmp_path / "results.jsonl").read_bytes().splitlines())
        if line["type"] == "cell" and line["status"] == "final"
    ]
    assert len(cells) == len({k[0] for k in recs}) and all(c["n"] == 0 for c in cells)
