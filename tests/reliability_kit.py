"""Shared helpers of the reliability suites (tests/test_reliability_*.py).

* :func:`grid_data` / :func:`make_grid`: a small grid on the embedded scripted endpoint with
  short timeouts and backoff, so injected faults resolve in milliseconds.
* :func:`run_inprocess`: ``runner.execution.grid_run.run_async`` (the code path of ``ladder run``) with a
  :class:`serve.config.ServerConfig` carrying fault rates, and the history of every adaptive
  limit it used.
* :func:`verdicts`: per-(cell, seed) scores of a run directory, via
  :func:`scoring.replay.episode_score.score_episode`, for comparing a faulty run with a fault-free one.
* :func:`tree_digest`: a hash of every file under a directory (names and bytes).
* :func:`ladder`: the ``ladder`` command line in a subprocess.
"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
from rich.console import Console

from protocol.records import EpisodeRecord
from runner.client.limiter import Limiter
from runner.execution.grid_run import RunSummary, run_async
from runner.grid.expand import Grid, parse_grid
from runner.rundir.logs import LogReport, read_logs
from scoring.replay.episode_score import score_episode
from serve import ServerConfig

__all__ = [
    "INFRA",
    "LimitHistory",
    "grid_data",
    "grid_toml",
    "ladder",
    "ladder_argv",
    "make_grid",
    "raw_completed_counts",
    "records",
    "run_inprocess",
    "tree_digest",
    "verdicts",
]

REPO = Path(__file__).resolve().parent.parent
# every termination that is not "completed": infrastructure errors and non-replies (#36)
INFRA = (
    "endpoint_error",
    "timeout",
    "client_error",
    "context_overflow",
    "cancelled",
    "content_filter",
    "empty_reply",
)
SYNTHETIC = "scripted/synthetic?obey=0.9&fresh=0.35&seed=7"


def grid_data(
    *,
    seeds: str = "100-102",
    steps: int = 5,
    arms: Sequence[str] = ("raw", "checklist", "directive", "enforce"),
    models: Sequence[dict[str, Any]] | None = None,
    timeout_s: float = 0.4,
    attempts: int = 6,
    backoff_s: float = 0.002,
    concurrency: int = 32,
    max_in_flight: int = 16,
    adaptive: bool = True,
    api_key_env: str | None = None,
) -> dict[str, Any]:
    endpoint: dict[str, Any] = {
        "name": "embedded",
        "base_url": "embedded",
        "max_in_flight": max_in_flight,
        "adaptive": adaptive,
    }
    if api_key_env:
        endpoint["api_key_env"] = api_key_env
    return {
        "run": {
            "seeds": seeds,
            "steps": [steps],
            "density": [0.3],
            "arms": list(arms),
            "concurrency": concurrency,
        },
        "endpoints": [endpoint],
        "models": list(models or [{"name": SYNTHETIC, "endpoint": "embedded"}]),
        "decoding": {"timeout_s": timeout_s, "attempts": attempts, "backoff_s": backoff_s},
    }


def make_grid(**kw: Any) -> Grid:
    return parse_grid(grid_data(**kw), source="test grid")


def grid_toml(data: dict[str, Any]) -> str:
    """A grid dict as TOML (the few shapes :func:`grid_data` produces)."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        return repr(v)

    out: list[str] = []
    for table in ("run", "decoding"):
        if table in data:
            out.append(f"[{table}]")
            out += [f"{k} = {value(v)}" for k, v in data[table].items()]
    for array in ("endpoints", "models"):
        for row in data.get(array, []):
            out.append(f"[[{array}]]")
            out += [f"{k} = {value(v)}" for k, v in row.items()]
    text = "\n".join(out) + "\n"
    assert tomllib.loads(text) == data, "grid_toml cannot write this grid"
    return text


class LimitHistory:
    """Every adaptive limit change seen while installed (``Limiter.throttled`` / ``success``)."""

    def __init__(self) -> None:
        self.limits: list[int] = []
        self.throttles = 0

    def install(self, monkeypatch: Any) -> LimitHistory:
        throttled, success = Limiter.throttled, Limiter.success
        hist = self

        def on_throttle(lim: Limiter) -> None:
            throttled(lim)
            hist.throttles += 1
            hist.limits.append(lim.limit)

        def on_success(lim: Limiter) -> None:
            before = lim.limit
            success(lim)
            if lim.limit != before:
                hist.limits.append(lim.limit)

        monkeypatch.setattr(Limiter, "throttled", on_throttle)
        monkeypatch.setattr(Limiter, "success", on_success)
        return self


async def run_inprocess(
    grid: Grid, out: Path, server_config: ServerConfig | None = None, *, check: bool = True
) -> tuple[RunSummary, str]:
    """``ladder run`` in this event loop against the embedded endpoint with ``server_config``;
    (summary, console text)."""
    buf = io.StringIO()
    console = Console(file=buf, width=200, highlight=False)
    summary = await run_async(
        grid, out, console=console, live=False, check=check, server_config=server_config
    )
    return summary, buf.getvalue()


def records(out: Path) -> dict[tuple[str, int], EpisodeRecord]:
    report = LogReport()
    recs = read_logs(out, report)
    assert not report.corrupt, report.corrupt
    return recs


def verdicts(recs: dict[tuple[str, int], EpisodeRecord]) -> dict[tuple[str, int], bytes]:
    """(cell slug, seed) -> the encoded primary and decline-aware scorings of each completed
    episode (strict verdict, channels, labels, per-turn executions and errors)."""
    out: dict[tuple[str, int], bytes] = {}
    for key, rec in recs.items():
        if rec.termination != "completed":
            continue
        s = score_episode(rec)
        assert s.scorable and not s.mismatches, (key, s.mismatches)
        out[key] = msgspec.json.encode([s.primary, s.decline_aware, s.refused])
    return out


def raw_completed_counts(out: Path) -> dict[tuple[str, int], int]:
    """(cell slug, seed) -> how many completed records the raw log files hold (every line
    that parses, duplicates included)."""
    dec = msgspec.json.Decoder(EpisodeRecord)
    counts: dict[tuple[str, int], int] = {}
    for path in sorted((out / "logs").glob("*.jsonl")):
        for line in path.read_bytes().split(b"\n"):
            if not line.strip():
                continue
            try:
                rec = dec.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue
            if rec.termination == "completed":
                key = (rec.cell.slug(), rec.spec.seed)
                counts[key] = counts.get(key, 0) + 1
    return counts


def tree_digest(root: Path) -> str:
    """A hash of every file under ``root``: relative names, sizes and bytes."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def ladder_argv(*args: str) -> list[str]:
    return [sys.executable, "-c", "from ladder.app import main; main()", *args]


def ladder(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``ladder ARGS`` in a subprocess; stdout and stderr captured as text."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        ladder_argv(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=cwd or REPO,
    )
