"""The memory arms end to end on the scripted endpoint (loopback): scores in both modes,
what record mode sends, the helper calls logged, no socket but the endpoint's, no thread,
and kill-and-resume with memory arms in flight."""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from protocol.episode.generate import generate
from protocol.records import CellKey, EpisodeRecord, EpisodeSpec, Knobs
from runner.arms import EpisodeContext, make_arm
from runner.grid.expand import GridError, parse_grid
from runner.memory.services import MemoryServices
from scoring.replay.episode_score import score_episode
from serve.endpoint.tokens import count
from tests.gates_fakes import FakeChat
from tests.reliability_kit import (
    SYNTHETIC,
    grid_data,
    grid_toml,
    ladder,
    ladder_argv,
    raw_completed_counts,
    records,
    run_inprocess,
    verdicts,
)

MEMORY = ("memory-topk", "mem0")
AUGMENT = [{"arm": a, "memory_mode": "augment"} for a in MEMORY]


def _data(model: str = "scripted/perfect", seeds: str = "100-103", **kw: Any) -> dict[str, Any]:
    data = grid_data(seeds=seeds, steps=5, arms=["raw", *MEMORY], timeout_s=60.0, **kw)
    data["models"] = [{"name": model, "endpoint": "embedded"}]
    data["run"]["variants"] = AUGMENT
    return data


def _by_cell(out: Path) -> dict[tuple[str, str], list[EpisodeRecord]]:
    cells: dict[tuple[str, str], list[EpisodeRecord]] = {}
    for rec in records(out).values():
        cells.setdefault((rec.cell.arm, rec.cell.knobs.memory_mode), []).append(rec)
    return cells


@pytest.fixture(scope="module")
def perfect_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[str, str], list[EpisodeRecord]]:
    out = tmp_path_factory.mktemp("perfect")
    summary, _ = asyncio.run(run_inprocess(parse_grid(_data()), out))
    assert summary["infrastructure"] == 0 and summary["episodes_run"] == 20
    return _by_cell(out)


def test_perfect_agent_scores_one_in_augment_mode(perfect_run: Any) -> None:
    """It reads the full transcript; the recall block adds nothing it acts on."""
    for arm in MEMORY:
        scores = [score_episode(r) for r in perfect_run[(arm, "augment")]]
        assert len(scores) == 4 and all(s.primary.success for s in scores), arm


def test_perfect_agent_fails_every_episode_in_record_mode_mostly_by_omission(
    perfect_run: Any,
) -> None:
    """Record mode sends the brief, the recall block and the last two exchanges. The perfect
    agent acts on what its transcript shows (Appendix A.1): a prerequisite booked more than
    two exchanges ago is not in view, so a ready step looks blocked and is deferred
    (omission); the revision scrolls out, so a cancelled step is booked again when asked
    (superseded). The perfect agent does not read the recall block (by design it acts on the
    transcript only), so nothing brings those facts back: strict 0 of 4 in both arms,
    omission the heaviest channel, the shape of the paper's Appendix F finding (0-2 of 128
    with a real model, which may read the block)."""
    for arm in MEMORY:
        scores = [score_episode(r) for r in perfect_run[(arm, "record")]]
        assert len(scores) == 4 and not any(s.primary.success for s in scores), arm
        totals: dict[str, int] = {}
        for s in scores:
            for ch, n in s.primary.channels.items():
                totals[ch] = totals.get(ch, 0) + n
        assert totals["omission"] == max(totals.values()) and totals["omission"] > 0, totals
    assert all(score_episode(r).primary.success for r in perfect_run[("raw", "record")])


def _agent_tokens(rec: EpisodeRecord) -> list[int]:
    return [next(c.prompt_tokens for c in t.calls if c.role == "agent") for t in rec.turns]


def test_record_mode_prompt_does_not_grow_with_the_transcript(perfect_run: Any) -> None:
    """Record mode's prompt is bounded by the brief plus (window + k) exchanges, whatever the
    turn; the full transcript of the same episode outgrows that bound."""
    for arm in MEMORY:
        for rec, full in zip(
            sorted(perfect_run[(arm, "record")], key=lambda r: r.seed),
            sorted(perfect_run[(arm, "augment")], key=lambda r: r.seed),
            strict=True,
        ):
            ep = generate(rec.spec)
            k, window = rec.cell.knobs.memory_k, rec.cell.knobs.memory_window
            exchange = max(
                count(t.sent_text) - count(t.arm_text) + count(t.reply) for t in rec.turns
            )
            bound = count(ep.brief) + (window + k) * (exchange + 16) + 64
            rec_t, full_t = _agent_tokens(rec), _agent_tokens(full)
            assert max(rec_t) <= bound < full_t[-1], (arm, bound, max(rec_t), full_t[-1])
            assert full_t[-1] - full_t[10] > 500  # the transcript grows by every exchange


def _never_called(messages: Sequence[Mapping[str, str]], role: str) -> str:
    raise AssertionError("record mode's context makes no endpoint call")


def test_record_mode_sends_the_window_only() -> None:
    ep = generate(EpisodeSpec(seed=100, steps=5, density=0.15))

    class _Helpers:
        memory = MemoryServices(parse_grid(_data()), {"embedded": FakeChat(_never_called)})

    history = [{"role": r, "content": str(i)} for i in range(40) for r in ("user", "assistant")]
    for mode, window, want in (
        ("record", 2, history[-4:]),
        ("record", 0, []),
        ("augment", 2, history),
    ):
        cell = CellKey(
            model="scripted/perfect",
            steps=5,
            density=0.15,
            arm="memory-topk",
            knobs=Knobs(memory_mode=mode, memory_window=window),  # type: ignore[arg-type]
        )
        arm = make_arm(EpisodeContext(episode=ep, cell=cell, agent=None, helpers=_Helpers()))  # type: ignore[arg-type]
        assert arm.context(history) == want


def test_memory_helper_calls_are_logged_with_their_tokens(perfect_run: Any) -> None:
    for mode in ("record", "augment"):
        for rec in perfect_run[("mem0", mode)]:
            later = rec.turns[1:]
            # every turn after the first: one mem0 extraction of the previous exchange
            assert all(sum(c.role == "memory" for c in t.calls) == 1 for t in later)
            assert all(
                c.prompt_tokens > 0 and c.completion_tokens > 0
                for t in later
                for c in t.calls
                if c.role == "memory"
            )
            # batched: the exchange with the next query in one request, mem0's extracted
            # memories in another; a text seen before is a cache hit (no request)
            per_turn = [sum(c.role == "embedding" for c in t.calls) for t in later]
            assert max(per_turn) == 2 and sum(per_turn) > len(later)
            assert [c.role for c in rec.turns[0].calls] == ["agent"]  # nothing stored yet
        for rec in perfect_run[("memory-topk", mode)]:
            # top-k: one batched embedding request per turn (the stored exchange + the query)
            assert all(
                [c.role for c in t.calls] in (["embedding", "agent"], ["agent"]) for t in rec.turns
            )
            assert sum(len(t.calls) == 2 for t in rec.turns) > len(rec.turns) / 2
            recalled = [t.arm_text for t in rec.turns[6:]]
            assert all(a.startswith("[MEMORY] ") and a.count("\n- ") == 5 for a in recalled)


async def test_memory_arms_open_no_socket_but_the_endpoints_and_no_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    connects: list[Any] = []
    lookups: list[Any] = []
    connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def spy_connect(self: socket.socket, address: Any) -> Any:
        connects.append(address)
        return connect(self, address)

    def spy_lookup(host: Any, *a: Any, **kw: Any) -> Any:
        lookups.append(host)
        return getaddrinfo(host, *a, **kw)

    monkeypatch.setattr(socket.socket, "connect", spy_connect)
    monkeypatch.setattr(socket, "getaddrinfo", spy_lookup)
    threads = threading.active_count()
    seen = [threads]
    stop = asyncio.Event()

    async def watch() -> None:
        while not stop.is_set():
            seen.append(threading.active_count())
            await asyncio.sleep(0.005)

    watcher = asyncio.create_task(watch())
    data = _data(seeds="100-101")
    data["run"]["arms"] = list(MEMORY)
    summary, _ = await run_inprocess(parse_grid(data), tmp_path)
    stop.set()
    await watcher
    assert summary["episodes_run"] == 8 and summary["infrastructure"] == 0
    assert connects, "the spy saw the endpoint's connections"
    assert {a[0] for a in connects} == {"127.0.0.1"} and len({a[1] for a in connects}) == 1
    assert set(lookups) <= {"127.0.0.1", "localhost"}
    assert max(seen) == threads, "no thread was started for mem0 or the stores"


def test_a_memory_arm_grid_without_the_extra_fails_validation_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # runner.memory's importlib.util is this module: patch it where the package looks it up
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n: None if n == "mem0" else real(n))
    with pytest.raises(GridError) as err:
        parse_grid(_data(), source="g.toml")
    (line,) = [x for x in str(err.value).splitlines() if "mem0" in x]
    assert line == (
        "g.toml: arm 'mem0' needs mem0: install the memory extra (pip install -e '.[memory]')"
    )
    bad = _data()
    bad["run"]["variants"] = [{"arm": "mem0", "memory_k": 0}]
    with pytest.raises(GridError, match="memory_k must be at least 1"):
        parse_grid(bad)
    bad["run"]["variants"] = [{"arm": "raw", "memory_mode": "augment"}]
    with pytest.raises(GridError, match="memory_mode applies to the memory arms only"):
        parse_grid(bad)


def test_kill_and_resume_with_memory_arms_in_flight(tmp_path: Path) -> None:
    import subprocess
    import time

    data = _data(model=SYNTHETIC, seeds="100-102", concurrency=16, max_in_flight=16)
    ref_out = tmp_path / "reference"
    asyncio.run(run_inprocess(parse_grid(data), ref_out))
    reference = verdicts(records(ref_out))
    assert len(reference) == 15
    grid_file = tmp_path / "grid.toml"
    grid_file.write_text(grid_toml(data))
    out = tmp_path / "run"
    proc = subprocess.Popen(
        ladder_argv("run", str(grid_file), "--out", str(out), "--no-live"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def logged() -> int:
        return (
            sum(p.read_bytes().count(b"\n") for p in (out / "logs").glob("*.jsonl"))
            if (out / "logs").is_dir()
            else 0
        )

    deadline = time.monotonic() + 120
    while logged() < 5 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    proc.kill()
    proc.wait()
    assert 5 <= logged() < 15, "killed with memory episodes still in flight"
    done = ladder("run", str(grid_file), "--out", str(out), "--no-live")
    assert done.returncode == 0 and "resuming" in done.stdout, done.stderr
    assert all(n == 1 for n in raw_completed_counts(out).values())
    assert verdicts(records(out)) == reference, "the resumed run scores as an uninterrupted one"


def test_the_paper_fixes_top_5_and_a_two_exchange_window() -> None:
    """Section 3.3: "cosine top-5 ... the brief, a recall block, and the last two exchanges"."""
    assert (Knobs().memory_k, Knobs().memory_window) == (5, 2)
    assert Knobs().memory_mode == "record"
    # the defaults leave every existing cell's slug as it was
    assert CellKey(model="m", steps=10, density=0.15, arm="raw").slug() == (
        "m__no-think__S10__rho0.15__procurement__amended__raw"
    )


def test_the_appendix_f_grid() -> None:
    from runner.grid.expand import load_grid

    g = load_grid(
        Path(__file__).resolve().parent.parent.parent.parent / "runner" / "grids" / "memory.toml"
    )
    assert g.seeds() == list(range(100, 228))
    assert g.graphs() == [(10, 0.15), (15, 0.3)]
    assert [(m.name, m.regime) for m in g.models] == [("qwen3-235b", "no-think")]
    per_graph = {(c.arm, c.knobs.memory_mode) for c in g.cells() if c.arm in MEMORY}
    assert per_graph == {(a, m) for a in MEMORY for m in ("record", "augment")}
    assert {"raw", "checklist", "ledger", "directive", "enforce"} <= {c.arm for c in g.cells()}


def test_ladder_cost_counts_the_memory_helper_calls(perfect_run: Any) -> None:
    from scoring.analyses.cost import cost_rows
    from scoring.report.cost_table import cost_table

    records = [rec for recs in perfect_run.values() for rec in recs]
    rows = {(r.cell.arm, r.cell.knobs.memory_mode): r for r in cost_rows(records)}
    raw = rows[("raw", "record")]
    assert raw.memory_calls == raw.embedding_calls == raw.helper_tokens == 0
    for arm in MEMORY:
        for mode in ("record", "augment"):
            r = rows[(arm, mode)]
            assert r.embedding_calls > 0 and r.helper_tokens > 0
    # mem0 makes extraction calls besides its embedding requests; top-k makes none
    assert rows[("mem0", "record")].memory_calls > 0
    assert rows[("memory-topk", "record")].memory_calls == 0
    table = cost_table(list(rows.values()))
    assert "memory / embed calls" in table and "memory_mode=augment" in table
