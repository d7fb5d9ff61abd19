"""No traceback from any command on bad input (issue 13): one table runs every command with
every bad input (and the grid-file mistakes of tests/integration/test_reliability_input.py) and asserts
exit 2, exactly one ``error:`` line, no "Traceback", and the workspace unchanged. Then the
environment problems that need more than a command line: a disk that fills while logging
(ENOSPC) and SIGTERM, each rerun to the same scores as an uninterrupted run."""

from __future__ import annotations

import asyncio
import errno
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import runner.files
from ladder.app import app
from runner.rundir.lock import run_lock
from tests.integration.test_reliability_input import OUT_OF_RANGE, UNKNOWN_KEYS, _merge
from tests.reliability_kit import (
    REPO,
    grid_data,
    grid_toml,
    ladder_argv,
    raw_completed_counts,
    records,
    tree_digest,
    verdicts,
)

UNSET_KEY = "LADDER_TEST_UNSET_KEY"
OFFLINE: dict[bool, list[str]] = {True: ["--offline"], False: []}


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def _base() -> dict[str, Any]:
    return grid_data(seeds="100-101", steps=5, arms=("raw", "directive"))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run (``run/``), its grid, and bad grid files beside them."""
    root = tmp_path_factory.mktemp("ws")
    (root / "grid.toml").write_text(grid_toml(_base()))
    result = CliRunner().invoke(
        app, ["run", str(root / "grid.toml"), "--out", str(root / "run"), "--no-live"]
    )
    asyncio.set_event_loop_policy(None)
    assert result.exit_code == 0, result.stdout + result.stderr
    bad_url = _merge(_base(), {"endpoints": [{"name": "embedded", "base_url": "localhost:8000"}]})
    (root / "bad_url.toml").write_text(grid_toml(bad_url))
    ftp = _merge(_base(), {"endpoints": [{"name": "embedded", "base_url": "ftp://x"}]})
    (root / "ftp.toml").write_text(grid_toml(ftp))
    (root / "binary.toml").write_bytes(b"\xff\xfe\x00garbage")
    (root / "adir.toml").mkdir()
    for i, (text, _, _) in enumerate(UNKNOWN_KEYS):
        (root / f"unknown{i}.toml").write_text(text)
    for i, (patch, _) in enumerate(OUT_OF_RANGE):
        (root / f"range{i}.toml").write_text(grid_toml(_merge(_base(), patch)))
    return root


def _busy_port() -> tuple[socket.socket, int]:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s, s.getsockname()[1]


W = "{ws}"  # replaced by the workspace path
RUN = [W + "/grid.toml", "--out", W + "/run", "--no-live"]
CASES: list[tuple[str, list[str], str]] = [
    # ladder run: flags
    (
        "no-scheme",
        ["run", "--base-url", "localhost:8000", "--out", W + "/x"],
        "needs http(s)://",
    ),
    ("ftp", ["run", "--base-url", "ftp://x", "--out", W + "/x"], "needs http(s)://"),
    ("steps-int", ["run", "-S", "abc", "--out", W + "/x"], "--steps: 'abc' is not an integer"),
    ("density", ["run", "--density", "x", "--out", W + "/x"], "--density: 'x' is not a number"),
    ("seeds", ["run", "--seeds", "abc", "--out", W + "/x"], "malformed seed range"),
    ("arm-typo", ["run", "--arms", "enforcer", "--out", W + "/x"], "did you mean 'enforce'"),
    ("concurrency", ["run", "--concurrency", "many"], "'--concurrency'"),
    ("limit", ["run", *RUN, "--limit", "0"], "--limit must be at least 1"),
    ("regime", ["run", "--regime", "think", "--out", W + "/x"], "--regime"),
    ("extra", ["run", "--extra", "nokey", "--out", W + "/x"], "--extra"),
    ("fault", ["run", "--fault", "boom=0.1", "--out", W + "/x"], "--fault"),
    ("fault-rate", ["run", "--fault", "503=2", "--out", W + "/x"], "in [0, 1]"),
    ("breaker", ["run", "--breaker-after", "-1", "--out", W + "/x"], "--breaker-after"),
    ("option", ["run", "--bogus"], "No such option"),
    ("command", ["rnu"], "Did you mean 'run'"),
    # ladder run / validate: grid files
    ("grid-url", ["run", W + "/bad_url.toml", "--out", W + "/run"], "needs http(s)://"),
    ("grid-ftp", ["run", W + "/ftp.toml", "--out", W + "/run"], "needs http(s)://"),
    ("validate-url", ["validate", W + "/bad_url.toml", "--offline"], "needs http(s)://"),
    ("validate-ftp", ["validate", W + "/ftp.toml", "--offline"], "needs http(s)://"),
    ("binary", ["run", W + "/binary.toml", "--out", W + "/run"], "not a UTF-8 text file"),
    ("grid-dir", ["run", W + "/adir.toml", "--out", W + "/run"], "cannot read grid"),
    ("missing", ["validate", W + "/missing.toml"], "cannot read grid"),
    ("other-grid", ["run", "--seeds", "100", "--out", W + "/run", "--no-live"], "different grid"),
    ("demo-other", ["demo", "--out", W + "/run", "--no-live"], "different grid"),
    ("locked", ["run", *RUN], "is in use by"),
    # the other commands
    ("score", ["score", W + "/nowhere"], "not a directory"),
    ("report", ["report", W + "/nowhere"], "not a directory"),
    ("cost", ["cost", W + "/nowhere"], "not a directory"),
    ("generate", ["generate", "--steps", "99"], "steps must be between"),
    ("show", ["show", W + "/nowhere"], "not a directory"),
    ("view", ["view", W + "/nowhere"], "not a directory"),
    ("serve-model", ["serve", "vllm", "nope"], "unknown model 'nope'"),
    ("serve-binary", ["serve", "vllm", "qwen3.6-35b"], "cannot start 'vllm'"),
    ("serve-port", ["serve", "scripted", "--port", "{port}"], "cannot listen on"),
    ("serve-port-range", ["serve", "scripted", "--port", "99999"], "--port must be in"),
    ("out-file", ["run", "--seeds", "100", "--out", W + "/grid.toml"], "is not a directory"),
    ("serve-latency", ["serve", "scripted", "--latency", "warp"], "--latency: unknown 'warp'"),
    ("serve-faults", ["serve", "scripted", "--fault-500", "0.8", "--fault-503", "0.8"], "sum"),
]
CASES += [
    (f"unknown{i}", ["run", W + f"/unknown{i}.toml", "--out", W + "/run"], where)
    for i, (_, where, _) in enumerate(UNKNOWN_KEYS)
]
CASES += [  # an unset API-key variable refuses only a validate that sends (--offline warns)
    (f"range{i}", ["validate", W + f"/range{i}.toml", *OFFLINE[message != UNSET_KEY]], message)
    for i, (_, message) in enumerate(OUT_OF_RANGE)
]


# refusals of several lines: the grid change, and the choices that cannot share the line
WRAPPED = {"other-grid", "demo-other", "fault", "serve-model"}


@pytest.mark.parametrize(("name", "args", "needle"), CASES, ids=[c[0] for c in CASES])
def test_every_command_refuses_bad_input_in_one_line(
    name: str, args: list[str], needle: str, workspace: Path, monkeypatch: Any
) -> None:
    monkeypatch.delenv("LADDER_TEST_UNSET_KEY", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")  # no vllm / sglang binary
    sock, port = _busy_port()
    argv = [a.replace(W, str(workspace)).replace("{port}", str(port)) for a in args]
    before = tree_digest(workspace)
    try:
        if name == "locked":
            with run_lock(workspace / "run"):
                result = CliRunner().invoke(app, argv)
        else:
            result = CliRunner().invoke(app, argv)
    finally:
        sock.close()
    out = result.stdout + result.stderr
    assert result.exit_code == 2, (name, result.exit_code, out)
    assert "Traceback" not in out
    lines = result.stderr.strip().splitlines()
    # one line; the grid-change refusal one change a line, and a list of choices too long
    # for one line wrapped under it, each line with its prefix (#49)
    assert len(lines) == 1 or name in WRAPPED, (name, result.stderr)
    assert all(x.startswith("error: ") for x in lines), (name, result.stderr)
    assert needle in lines[0], (needle, lines[0])
    # each within 80 columns, the workspace's paths not counted (a user's path is as long
    # as it is; this tmp_path is longer than any typed one)
    widths = [len(re.sub(re.escape(str(workspace)) + r"/[\w.-]*", "", x)) for x in lines]
    assert max(widths) <= 80, (name, result.stderr)
    assert tree_digest(workspace) == before, "a refused command changes nothing"
    assert not (workspace / "x").exists()


# --- ENOSPC ------------------------------------------------------------------------------


def _clean_run(tmp_path: Path, grid: Path) -> dict[Any, bytes]:
    result = CliRunner().invoke(
        app, ["run", str(grid), "--out", str(tmp_path / "clean"), "--no-live"]
    )
    asyncio.set_event_loop_policy(None)
    assert result.exit_code == 0, result.stderr
    return verdicts(records(tmp_path / "clean"))


def test_a_full_disk_stops_cleanly_and_the_rerun_resumes(tmp_path: Path, monkeypatch: Any) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(grid_toml(grid_data(seeds="100-105", steps=5, arms=("raw", "checklist"))))
    clean = _clean_run(tmp_path, grid)
    real: Callable[[int, memoryview], None] = runner.files._write_all
    calls = [0]

    def filling(fd: int, view: memoryview) -> None:
        if Path(os.readlink(f"/proc/self/fd/{fd}")).parent.name != "logs":
            return real(fd, view)  # results.jsonl and the caches: room for them
        calls[0] += 1
        if calls[0] >= 4:  # the fourth record: half of it fits, then the disk is full
            os.write(fd, view[: len(view) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, view)

    monkeypatch.setattr(runner.files, "_write_all", filling)
    out = tmp_path / "run"
    full = CliRunner().invoke(app, ["run", str(grid), "--out", str(out), "--no-live"])
    asyncio.set_event_loop_policy(None)
    assert full.exit_code == 2, full.stdout + full.stderr
    lines = full.stderr.strip().splitlines()
    assert len(lines) == 1 and "disk full" in lines[0] and "rerun" in lines[0]
    assert "Traceback" not in full.stdout + full.stderr
    for log in (out / "logs").glob("*.jsonl"):
        assert log.read_bytes().endswith(b"\n"), "no torn line left behind"
    assert sum(raw_completed_counts(out).values()) == 3, "the records logged before are intact"
    monkeypatch.setattr(runner.files, "_write_all", real)
    again = CliRunner().invoke(app, ["run", str(grid), "--out", str(out), "--no-live"])
    assert again.exit_code == 0, again.stderr
    assert "3 already done" in again.stdout
    assert verdicts(records(out)) == clean


# --- SIGTERM -----------------------------------------------------------------------------


def test_sigterm_stops_like_ctrl_c_and_the_rerun_gives_the_same_scores(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    data = grid_data(seeds="100-115", steps=5, arms=("raw",), concurrency=2, timeout_s=5.0)
    grid.write_text(grid_toml(data))
    clean = _clean_run(tmp_path, grid)
    out = tmp_path / "run"
    args = ["run", str(grid), "--out", str(out), "--no-live", "--latency-s", "0.05"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    proc = subprocess.Popen(
        ladder_argv(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (out / "logs").is_dir() and any(raw_completed_counts(out).values()):
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, (stdout, stderr)
    assert "terminated (SIGTERM)" in stdout and "Traceback" not in stdout + stderr
    done = sum(raw_completed_counts(out).values())
    assert 0 < done < 16, done
    again = subprocess.run(ladder_argv(*args), capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0, again.stderr
    assert f"{done} already done" in again.stdout
    assert verdicts(records(out)) == clean
