"""Kill drill: ``ladder run`` in a subprocess, killed with SIGKILL at chosen points (during
the compiles before any episode is logged, mid-episode after some log lines, with a log line
torn in half as a kill mid-write leaves it), resumed each time with the same command. The
final logs hold every (cell, seed) exactly once (the reader keeps the last record, and the
raw files hold no second completed record of any pair) and score identically to an
uninterrupted run. A corrupt compile-cache or matcher-cache entry is detected, dropped and
recomputed, never trusted.

The short drill (one kill, one resume) runs in the default suite; the several-kill drill is
``slow`` (``just drill``).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from protocol.episode.generate import generate
from runner.execution.connect import open_endpoints
from runner.gates.helper_models import Helpers
from runner.grid.expand import expand
from runner.rundir.logs import LogReport, read_logs
from tests.reliability_kit import (
    REPO,
    grid_data,
    grid_toml,
    ladder,
    ladder_argv,
    make_grid,
    raw_completed_counts,
    records,
    run_inprocess,
    verdicts,
)

ARMS = ("raw", "checklist", "directive", "enforce")
TORN_RESULT = b'{"type": "cell", "cell": {"mod'  # half a streamed result line


def _grid_kw(seeds: str) -> dict[str, Any]:
    return {
        "seeds": seeds,
        "steps": 5,
        "arms": ARMS,
        "concurrency": 16,
        "max_in_flight": 16,
        "timeout_s": 60.0,
        "backoff_s": 0.05,
    }


def _log_lines(out: Path) -> int:
    logs = out / "logs"
    if not logs.is_dir():
        return 0
    return sum(p.read_bytes().count(b"\n") for p in logs.glob("*.jsonl"))


def _compiles(out: Path) -> int:
    d = out / "cache" / "compile"
    return len(list(d.glob("*.json"))) if d.is_dir() else 0


def _start(grid_file: Path, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        ladder_argv("run", str(grid_file), "--out", str(out), "--no-live"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO,
    )


def _kill_when(proc: subprocess.Popen[bytes], ready: Any, limit_s: float = 60.0) -> bool:
    """SIGKILL ``proc`` as soon as ``ready()`` holds; False when it finished first."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if ready():
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.002)
    proc.kill()
    raise AssertionError("the run neither reached the kill point nor finished")


def _tear_a_line(out: Path, rng: random.Random) -> str:
    """Append the first half of a copy of a logged record, without its newline: what a kill
    in the middle of a write leaves. Returns the torn file's name."""
    path = rng.choice(sorted((out / "logs").glob("*.jsonl")))
    first = path.read_bytes().split(b"\n", 1)[0]
    with path.open("ab") as f:
        f.write(first[: len(first) // 2])
    return path.name


def _reference(tmp: Path, seeds: str) -> dict[tuple[str, int], bytes]:
    out = tmp / "reference"
    summary, _ = asyncio.run(run_inprocess(make_grid(**_grid_kw(seeds)), out))
    assert summary["infrastructure"] == 0
    return verdicts(records(out))


def _check_final(
    out: Path, reference: dict[tuple[str, int], bytes], torn_results: int = 0
) -> LogReport:
    report = LogReport()
    final = read_logs(out, report)
    assert final.keys() == reference.keys(), "every (cell, seed) is logged"
    assert all(r.termination == "completed" for r in final.values())
    counts = raw_completed_counts(out)
    assert counts.keys() == reference.keys()
    dupes = {k: n for k, n in counts.items() if n != 1}
    assert not dupes, f"(cell, seed) pairs with more than one completed record: {dupes}"
    assert verdicts(final) == reference, "the resumed run scores as an uninterrupted one"
    bad = 0
    for line in (out / "results.jsonl").read_bytes().splitlines():
        try:
            orjson.loads(line)
        except orjson.JSONDecodeError:
            assert line == TORN_RESULT, "a torn line stays alone, the next one whole"
            bad += 1
    assert bad == torn_results, "every streamed result line is whole but the torn ones"
    return report


def _resume(grid_file: Path, out: Path) -> subprocess.CompletedProcess[str]:
    done = ladder("run", str(grid_file), "--out", str(out), "--no-live")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done


def test_kill_once_then_resume(tmp_path: Path) -> None:
    """The short drill: kill -9 mid-episode, tear a log line, resume once."""
    seeds = "100-105"
    reference = _reference(tmp_path, seeds)
    grid_file = tmp_path / "grid.toml"
    grid_file.write_text(grid_toml(grid_data(**_grid_kw(seeds))))
    out = tmp_path / "run"
    total = len(reference)
    target = total // 3
    proc = _start(grid_file, out)
    assert _kill_when(proc, lambda: _log_lines(out) >= target), "killed before the end"
    logged = _log_lines(out)
    assert target <= logged < total
    torn = _tear_a_line(out, random.Random(0))
    results = out / "results.jsonl"
    with results.open("ab") as f:  # a streamed result line torn the same way
        f.write(TORN_RESULT)
    done = _resume(grid_file, out)
    assert "resuming" in done.stdout
    assert "truncated log line" in done.stdout and torn in done.stdout
    report = _check_final(out, reference, torn_results=1)
    assert len(report.corrupt) == 1 and torn in report.corrupt[0]  # the torn half, now closed


@pytest.mark.slow
def test_kill_many_times_then_resume(tmp_path: Path) -> None:
    """Several kills at chosen and random points of one grid, a resume after each."""
    seeds = "100-123"
    reference = _reference(tmp_path, seeds)
    grid_file = tmp_path / "grid.toml"
    grid_file.write_text(grid_toml(grid_data(**_grid_kw(seeds))))
    out = tmp_path / "run"
    total = len(reference)
    rng = random.Random(int(os.environ.get("DRILL_SEED", "8")))
    # 1: during the compiles, before any episode is logged.
    proc = _start(grid_file, out)
    killed = _kill_when(proc, lambda: _compiles(out) >= 1 and _log_lines(out) == 0)
    assert killed and _log_lines(out) == 0
    kills = 1
    # 2..: mid-episode after a random number of new log lines; a torn line after some.
    while kills < 6:
        before = _log_lines(out)
        if before >= total - 2:
            break
        target = rng.randint(before + 1, min(total - 1, before + total // 4))
        proc = _start(grid_file, out)
        if not _kill_when(proc, lambda t=target: _log_lines(out) >= t):
            break
        kills += 1
        if rng.random() < 0.5:
            _tear_a_line(out, rng)
    assert kills >= 4
    _resume(grid_file, out)
    _resume(grid_file, out)  # a second resume of a finished run runs nothing
    _check_final(out, reference)
    print(f"kill drill: {kills} kills, {total} episodes, final logs complete and identical")


# --- corrupt helper caches ---------------------------------------------------------------


def _corrupt_compile_entry(path: Path) -> None:
    data = orjson.loads(path.read_bytes())
    data["payload"]["graph_reply"] = data["payload"]["graph_reply"].replace("RC-", "RC-9", 1)
    path.write_bytes(orjson.dumps(data))  # valid JSON, stale checksum


async def _compile_and_match(out: Path, grid: Any) -> tuple[Helpers, list[Any]]:
    task = next(t for t in expand(grid) if t.cell.arm == "directive")
    episode = generate(task.spec)
    turns = list(
        {t.text: t for t in episode.turns if t.kind not in ("filler", "revision")}.values()
    )[:6]
    async with open_endpoints(grid) as endpoints:
        helpers = Helpers(grid, out, endpoints)
        compiled, _ = await helpers.compile(task.cell, episode)
        matched = [(await helpers.match(task.cell, episode, t))[0] for t in turns]
    return helpers, [compiled.graph, compiled.revision, matched]


async def test_corrupt_cache_entries_are_dropped_and_recomputed(tmp_path: Path) -> None:
    grid = make_grid(seeds="100", steps=5, arms=("directive",))
    fresh, truth = await _compile_and_match(tmp_path, grid)
    assert fresh.stats.compile_calls == 2 and fresh.stats.matcher_calls == 6
    # A clean second run reads everything back from disk.
    again, same = await _compile_and_match(tmp_path, grid)
    assert same == truth and again.stats.compile_calls == 0 and again.stats.matcher_calls == 0
    # Corrupt: the compile entry (edited payload), one matcher line (bit flip), one matcher
    # shard cut mid-line (a kill mid-append).
    (entry,) = (tmp_path / "cache" / "compile").glob("*.json")
    _corrupt_compile_entry(entry)
    shards = sorted((tmp_path / "cache" / "matcher").glob("*.jsonl"))
    assert len(shards) >= 2
    line = shards[0].read_bytes()
    shards[0].write_bytes(line.replace(b'"redo":false', b'"redo":true ', 1))
    cut = shards[-1].read_bytes()
    shards[-1].write_bytes(cut[: len(cut) - 7])
    recomputed, values = await _compile_and_match(tmp_path, grid)
    assert values == truth, "corrupt entries were not trusted"
    assert recomputed.stats.corrupt >= 3
    assert recomputed.stats.compile_calls == 2, "the compile was recomputed"
    assert recomputed.stats.matcher_calls >= 2, "the corrupt matcher answers were recomputed"
    # The recomputed entries are whole again: a fourth run trusts the disk and makes no
    # request. The compile entry was rewritten; the two bad matcher lines stay in their
    # append-only shards, skipped (and counted) on every read, never trusted.
    final, values = await _compile_and_match(tmp_path, grid)
    assert values == truth and final.stats.corrupt == 2
    assert final.stats.compile_calls == 0 and final.stats.matcher_calls == 0
