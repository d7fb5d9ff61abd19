"""``ladder run`` does what its command says (issue 13): flags override a grid file, the run
directory is locked, grid supersets resume, the breaker stops a run against a dead server,
and OpenAI's environment variables are honoured."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from ladder.app import app
from runner.rundir.lock import run_lock
from runner.rundir.logs import LogReport, read_logs
from tests.reliability_kit import (
    REPO,
    grid_data,
    grid_toml,
    ladder,
    ladder_argv,
    make_grid,
    raw_completed_counts,
)

PAPER = REPO / "runner" / "grids" / "paper.toml"


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)  # `ladder run` installs uvloop's; keep tests apart


def _invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, list(args), env=env)


def _manifest(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads((out / "manifest.json").read_bytes())
    return data


def _scripted_paper(tmp_path: Path) -> Path:
    """paper.toml with its endpoints on the embedded endpoint and its served names scripted."""
    text = PAPER.read_text()
    for served in ("qwen3-235b-a22b-instruct-2507", "qwen3-235b-a22b-thinking-2507"):
        text = text.replace(f'"{served}"', '"scripted/perfect"')
    for url in ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8001/v1"):
        text = text.replace(f'"{url}"', '"embedded"')
    path = tmp_path / "paper.toml"
    path.write_text(text)
    return path


# --- flags with a grid file ----------------------------------------------------------------


def test_paper_grid_with_seeds_arms_and_limit_runs_what_the_flags_say(tmp_path: Path) -> None:
    grid = _scripted_paper(tmp_path)
    out = tmp_path / "run"
    args = ["run", str(grid), "--seeds", "100-101", "--arms", "raw", "--limit", "1"]
    result = _invoke(*args, "--out", str(out), "--no-live")
    assert result.exit_code == 0, result.stdout + result.stderr
    recs = read_logs(out)
    # 2 models x 5 graphs x 1 arm x 1 seed (the paper grid: 5,120 episodes)
    assert len(recs) == 10
    assert {r.cell.arm for r in recs.values()} == {"raw"}
    assert {r.spec.seed for r in recs.values()} == {100}
    assert "10 episodes run" in result.stdout
    assert "overriding" in result.stdout and "--limit 1" in result.stdout
    manifest = _manifest(out)
    assert manifest["overrides"] == {"--arms": "raw", "--seeds": "100-101", "--limit": 1}
    assert manifest["grid"]["run"]["seeds"] == "100"


def test_model_and_endpoint_flags_override_the_real_paper_grid(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = _invoke(
        "run",
        str(PAPER),
        "--seeds",
        "100",
        "--arms",
        "raw",
        "--model",
        "qwen3-235b",
        "--served",
        "scripted/perfect",
        "--base-url",
        "embedded",
        "--out",
        str(out),
        "--no-live",
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert len(read_logs(out)) == 5
    assert "endpoint instruct: the embedded scripted endpoint" in result.stdout


REFUSED_FLAGS = [
    (["--served", "x"], "--served names one model"),
    (["--model", "qwen3-235", "--base-url", "embedded"], "did you mean 'qwen3-235b'"),
    (["--limit", "0"], "--limit must be at least 1"),
    (["--arms", "enforcer"], "did you mean 'enforce'"),
    (["-S", "abc"], "--steps: 'abc' is not an integer"),
    (["--density", "thick"], "--density: 'thick' is not a number"),
    (["--regime", "thinkng"], "did you mean 'thinking'"),
    (["--extra", "x=nojson"], "--extra x"),
    (["--latency-s", "0.1"], "no model of this grid runs on it"),
    (["--base-url", "localhost:8000"], "'localhost:8000' needs http(s)://: http://localhost:8000?"),
]


@pytest.mark.parametrize(("flags", "needle"), REFUSED_FLAGS)
def test_a_flag_that_cannot_apply_is_refused(flags: list[str], needle: str, tmp_path: Path) -> None:
    result = _invoke("run", str(PAPER), *flags, "--out", str(tmp_path / "r"))
    assert result.exit_code == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.stderr
    assert not (tmp_path / "r").exists()


def test_flag_runs_take_regime_select_served_and_extra(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = _invoke(
        "run",
        "--model",
        "m",
        "--served",
        "scripted/perfect",
        "--regime",
        "thinking",
        "--select",
        "request",
        "--extra",
        "top_k=1",
        "--seeds",
        "100",
        "--arms",
        "raw",
        "-S",
        "5",
        "--out",
        str(out),
        "--no-live",
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    model = _manifest(out)["grid"]["models"][0]
    assert model == {**model, "served": "scripted/perfect", "regime": "thinking"}
    assert model["select"] == "request" and model["extra"] == {"top_k": 1}
    (rec,) = read_logs(out).values()
    assert rec.cell.regime == "thinking"


# --- demo and grid changes --------------------------------------------------------------


def test_demo_refuses_a_directory_of_another_grid(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = _invoke("run", "--seeds", "100", "-S", "5", "--out", str(out), "--no-live")
    assert first.exit_code == 0, first.stderr
    before = (out / "manifest.json").read_bytes()
    result = _invoke("demo", "--out", str(out), "--no-live")
    assert "endpoint embedded: the embedded scripted endpoint" in result.stdout  # (#49)
    assert result.exit_code == 2
    assert "holds a different grid" in result.stderr  # one change a line, each "error:" (#49)
    assert all(x.startswith("error: ") for x in result.stderr.splitlines())
    assert all(len(x) <= 80 for x in result.stderr.splitlines()[1:])  # the first: the path
    assert (out / "manifest.json").read_bytes() == before


def test_demo_draws_its_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The main job shows its figures: its report is asked for them (``ladder report``
    draws them only with --figures, #50)."""
    import ladder.demo
    import runner.rundir.report

    asked: list[dict[str, Any]] = []

    def report(out: Path, **kw: Any) -> Path:
        asked.append(kw)
        return out / "report.md"

    monkeypatch.setattr(ladder.demo, "execute", lambda *a, **k: True)
    monkeypatch.setattr(runner.rundir.report, "write_report", report)
    result = _invoke("demo", "--out", str(tmp_path / "demo"), "--no-live")
    assert result.exit_code == 0, result.stderr
    assert len(asked) == 1 and asked[0]["figures"] is True


def _grid_file(tmp_path: Path, name: str, **kw: Any) -> Path:
    path = tmp_path / name
    path.write_text(grid_toml(grid_data(**{"steps": 5, "arms": ("raw",), **kw})))
    return path


def test_a_superset_of_seeds_and_arms_resumes_and_updates_the_manifest(tmp_path: Path) -> None:
    out = tmp_path / "run"
    small = _grid_file(tmp_path, "small.toml", seeds="100-101")
    assert _invoke("run", str(small), "--out", str(out), "--no-live").exit_code == 0
    old = read_logs(out)
    big = _grid_file(tmp_path, "big.toml", seeds="100-103", arms=("raw", "checklist"))
    result = _invoke("run", str(big), "--out", str(out), "--no-live")
    assert result.exit_code == 0, result.stderr
    assert "adds seeds 102-103; arms checklist" in result.stdout
    new = read_logs(out)
    assert len(new) == 8 and all(new[k] == old[k] for k in old)
    assert _manifest(out)["grid"]["run"]["seeds"] == "100-103"
    again = _invoke("run", str(big), "--out", str(out), "--no-live")
    assert again.exit_code == 0 and "0 episodes run" in again.stdout


def test_other_changes_are_refused_with_a_diff_and_allowed_with_the_flag(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = _grid_file(tmp_path, "a.toml", seeds="100-101")
    assert _invoke("run", str(first), "--out", str(out), "--no-live").exit_code == 0
    other = _grid_file(tmp_path, "b.toml", seeds="101-102", attempts=3)
    result = _invoke("run", str(other), "--out", str(out), "--no-live")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()  # one change a line, each "error:" (#49)
    assert all(x.startswith("error: ") for x in lines)
    assert 'error:   run.seeds "100-101" -> "101-102"' in lines
    assert "error:   decoding.attempts 6 -> 3" in lines
    assert "--allow-grid-change" in lines[-1]
    allowed = _invoke("run", str(other), "--out", str(out), "--no-live", "--allow-grid-change")
    assert allowed.exit_code == 0, allowed.stderr
    assert _manifest(out)["grid"]["run"]["seeds"] == "101-102"
    plain = _invoke("run", str(other), "--out", str(out), "--no-live")
    assert plain.exit_code == 0, "the manifest took the allowed grid"


# --- the run-directory lock ---------------------------------------------------------------


def test_a_held_directory_refuses_a_second_run_naming_the_holder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with run_lock(out):
        result = ladder("run", "--seeds", "100", "--out", str(out), "--no-live")
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and len(result.stderr.splitlines()) == 1
    assert f"process {os.getpid()}" in result.stderr or "another process" in result.stderr
    if Path("/proc/locks").exists():
        assert f"process {os.getpid()}" in result.stderr
    assert not any(out.iterdir()), "the refused run wrote nothing"


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    code = (
        "import sys, time; from pathlib import Path; from runner.rundir.lock import run_lock\n"
        f"with run_lock(Path({str(out)!r})):\n    print('held', flush=True); time.sleep(60)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    holder = subprocess.Popen(
        [ladder_argv()[0], "-c", code], stdout=subprocess.PIPE, text=True, env=env
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    result = ladder("run", "--seeds", "100", "-S", "5", "--out", str(out), "--no-live")
    assert result.returncode == 0, result.stderr


def test_two_concurrent_runs_leave_one_record_per_cell_and_seed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "--seeds", "100-105", "-S", "5", "--out", str(out), "--no-live"]
    args += ["--latency", "fixed", "--latency-s", "0.01"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    procs = [
        subprocess.Popen(
            ladder_argv(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        for _ in range(2)
    ]
    results = [(p.wait(timeout=120), p.stderr.read().decode() if p.stderr else "") for p in procs]
    assert all(rc in (0, 2) for rc, _ in results), results
    for rc, err in results:
        if rc == 2:
            assert "is in use by" in err and len(err.splitlines()) == 1
    counts = raw_completed_counts(out)
    assert len(counts) == 12 and set(counts.values()) == {1}, counts
    report = LogReport()
    read_logs(out, report)
    assert report.duplicates == 0


# --- the breaker, the live counters, OpenAI's variables -----------------------------------------


def test_the_breaker_stops_a_run_against_a_failing_endpoint(tmp_path: Path) -> None:
    """Every call answered 503: after 8 failed calls in a row the run stops with one line,
    long before every episode has spent its attempts (the preflight is skipped here: it
    would refuse this endpoint first)."""
    from ladder.errors import leaf as _leaf
    from runner.execution.scheduler import ModelsStopped
    from serve.config import FaultConfig, ServerConfig

    server = ServerConfig(faults=FaultConfig(rate_503=1.0))
    grid = make_grid(seeds="100-131", arms=("raw",), attempts=4, concurrency=4)

    async def go() -> BaseException:
        from rich.console import Console

        from runner.execution.grid_run import run_async

        try:
            await run_async(
                grid,
                tmp_path / "r",
                console=Console(quiet=True),
                live=False,
                check=False,
                server_config=server,
                breaker_after=8,
            )
        except BaseException as e:  # the task group wraps it
            return _leaf(e)
        raise AssertionError("the run did not stop")

    stopped = asyncio.run(go())
    assert isinstance(stopped, ModelsStopped)  # the model's cells stop, the others go on (#47)
    assert "8 calls in a row failed" in str(stopped) and "HTTP 503" in str(stopped)
    logged = read_logs(tmp_path / "r") if (tmp_path / "r" / "logs").is_dir() else {}
    assert len(logged) < 32


def test_no_live_prints_progress_lines(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from runner.execution.grid_run import run_async

    buf = io.StringIO()
    console = Console(file=buf, width=300)
    from serve.config import LatencyConfig, ServerConfig

    server = ServerConfig(latency=LatencyConfig(mode="fixed", seconds=0.02))
    grid = make_grid(seeds="100-103", arms=("raw",), concurrency=1)
    asyncio.run(
        run_async(
            grid,
            tmp_path / "r",
            console=console,
            live=False,
            server_config=server,
            progress_every_s=0.05,
        )
    )
    text = buf.getvalue()
    assert "preflight (embedded): " in text and "timeout 0.4 s" in text
    rows = text.splitlines()
    # each progress report: its "episodes" line and the lines its fields wrap onto (80
    # columns, #40), through the tokens/s field
    starts = [i for i, x in enumerate(rows) if x.startswith("episodes ")]
    assert starts, text
    lines = []
    for i in starts:
        end = next(j for j in range(i, len(rows)) if "tokens/s " in rows[j])
        assert end - i <= 3 and all(len(x) <= 80 for x in rows[i : end + 1])
        lines.append("  ".join(rows[i : end + 1]))
    assert all("elapsed " in x and "ETA " in x and "requests in flight " in x for x in lines)
    assert all("retries " in x and "429s " in x and "failed calls " in x for x in lines)


def test_openai_base_url_is_honoured_and_printed(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    server = subprocess.Popen(
        ladder_argv("serve", "scripted", "--port", "0"), stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        result = ladder(
            "run",
            "--seeds",
            "100",
            "-S",
            "5",
            "--arms",
            "raw",
            "--out",
            str(tmp_path / "r"),
            "--no-live",
            env={"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-test-not-a-secret"},
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert result.returncode == 0, result.stderr
    assert f"endpoint {url} (from OPENAI_BASE_URL)" in result.stdout
    assert "API key from OPENAI_API_KEY" in result.stdout
    endpoint = _manifest(tmp_path / "r")["grid"]["endpoints"][0]
    assert endpoint["api_key_env"] == "OPENAI_API_KEY"
    assert "sk-test-not-a-secret" not in (tmp_path / "r" / "manifest.json").read_text()


def test_version_and_short_help() -> None:
    from importlib import metadata

    version = _invoke("--version")
    assert version.exit_code == 0 and metadata.version("state-ladder") in version.stdout
    for args in (["-h"], ["run", "-h"], ["serve", "scripted", "-h"]):
        result = _invoke(*args)
        assert result.exit_code == 0 and "Usage" in result.stdout, args
    assert "--fault-503" in _invoke("serve", "scripted", "-h").stdout
    assert "rate of HTTP 503" in _invoke("serve", "scripted", "-h").stdout


def test_a_tripped_breaker_ends_the_command_with_exit_3_and_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import typer
    from rich.console import Console

    from ladder.errors import leaf as _leaf
    from ladder.run import _refuse
    from runner.client.call_stats import BreakerTripped, CallStats

    stats = CallStats(endpoint="e", breaker_after=2)
    stats.failure("HTTP 500: boom")
    stats.failure("429 Too Many Requests")  # throttling: not a failure
    stats.succeeded()  # a success resets the count
    stats.failure("HTTP 500: boom")
    with pytest.raises(BreakerTripped) as tripped:
        stats.failure("connection error: ServerDisconnectedError")
    group = BaseExceptionGroup("task group", [asyncio.CancelledError(), tripped.value])
    with pytest.raises(typer.Exit) as ended:
        _refuse(_leaf(group), Path("out"), Console(quiet=True), False)
    assert ended.value.exit_code == 3
    err = capsys.readouterr().err.strip().splitlines()  # one error, wrapped at 80 (#49)
    assert err and all(x.startswith("error:") and len(x) <= 80 for x in err), err
    assert "'e': 2 calls in a row failed" in " ".join(x.removeprefix("error:").strip() for x in err)
    assert stats.retries == 4 and stats.throttled_429 == 1 and stats.failed_attempts == 3


@given(st.lists(st.integers(min_value=0, max_value=400), unique=True).map(sorted))
def test_format_seeds_round_trips(seeds: list[int]) -> None:
    from runner.grid.seeds import format_seeds, parse_seeds

    text = format_seeds(seeds)
    if seeds:
        assert parse_seeds(text) == seeds
    assert "," not in text or len(seeds) > 1


def test_compare_grids_accepts_only_strict_supersets() -> None:
    import msgspec

    from runner.grid.change import compare_grids
    from runner.grid.expand import parse_grid

    base = grid_data(seeds="100-101", steps=5, arms=("raw",))
    old = msgspec.to_builtins(parse_grid(base))

    def change(**run: Any) -> Any:
        data = {**base, "run": {**base["run"], **run}}
        return compare_grids(old, parse_grid(data))

    assert change().same
    assert change(concurrency=3).same, "concurrency is not the grid's identity"
    more = change(seeds="100-103", arms=["raw", "enforce"], domains=["procurement", "release"])
    assert more.compatible and more.added == [
        "seeds 102-103",
        "domains release",
        "arms enforce",
    ]
    for run in ({"seeds": "101-102"}, {"arms": ["checklist"]}, {"paraphrase_tier": 1}):
        refused = change(**run)
        assert not refused.compatible and refused.diff, run
    decoding = compare_grids(old, parse_grid({**base, "decoding": {"attempts": 2}}))
    assert not decoding.compatible and any("decoding.attempts" in d for d in decoding.diff)
    other_model = {**base, "models": [{"name": base["models"][0]["name"], "served": "x"}]}
    assert not compare_grids(old, parse_grid(other_model)).compatible
