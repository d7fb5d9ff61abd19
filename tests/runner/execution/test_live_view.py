"""The live view keeps progress, episodes done / total, elapsed and ETA on any terminal from
80 columns, and ``--no-live`` prints the same fields (issue 28, items 1 and 7)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest

from runner.client.endpoint import Endpoint
from runner.execution.live import counters, live_view, pack, status_line
from runner.execution.scheduler import RunState
from tests.reliability_kit import REPO, ladder_argv, make_grid

CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][0-9A-Za-z]")
FRAME = re.compile(
    r"^episodes .*?(\d+)/(\d+) elapsed \d+:\d\d:\d\d ETA (\d+:\d\d:\d\d|-:--:--)\s*$"
)


def _on_pty(argv: list[str], columns: int) -> str:
    """``argv`` run with a pseudo-terminal of ``columns`` x 40 as its stdin, stdout, stderr;
    everything it wrote, escape sequences removed."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(PYTHONPATH=str(REPO), TERM="xterm-256color")
    env.pop("OPENAI_BASE_URL", None)
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=REPO)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=10)
    os.close(master)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")[-2000:]
    return CSI.sub("", b"".join(chunks).decode("utf-8", errors="replace"))


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_the_live_view_keeps_progress_at_every_width(columns: int, tmp_path: Path) -> None:
    argv = ladder_argv(
        "run", "--seeds", "100-103", "--arms", "raw", "--concurrency", "1",
        "--latency", "fixed", "--latency-s", "0.003", "--out", str(tmp_path / "r"),
    )  # fmt: skip
    text = _on_pty(argv, columns)
    lines = [x for x in re.split(r"[\r\n]", text) if x.strip()]
    frames = [x for x in lines if x.startswith("episodes ")]
    assert frames, text
    for frame in frames:  # every frame: the bar, done / total, elapsed and ETA, in the width
        assert FRAME.match(frame), (columns, frame)
        assert len(frame) <= columns, frame
    assert FRAME.match(frames[-1]).groups()[:2] == ("4", "4")  # type: ignore[union-attr]
    fields = ("requests ", "turns ", "retries ", "429s ", "failed calls ", "infra ")
    stats = [x for x in lines if x.startswith((*fields, "tokens/s", "cells "))]
    assert all(len(x) <= columns for x in stats), stats
    assert any("tokens/s " in x for x in stats) and any("failed calls " in x for x in stats)
    if columns >= 200:  # the counters fit on one line
        assert any("requests in flight" in x and "tokens/s" in x for x in stats)
    else:  # they wrap, a field never split
        assert any(x.startswith("tokens/s ") for x in stats), stats
    assert "done: 4 episodes run" in text


def test_pack_wraps_at_field_boundaries_and_cuts_only_a_field_too_wide() -> None:
    assert pack("a 1  bb 2  ccc 3", 9) == ["a 1  bb 2", "ccc 3"]
    assert pack("a 1  bb 2  ccc 3", 80) == ["a 1  bb 2  ccc 3"]
    assert pack("x" * 12, 8) == ["xxxxxxx…"]


def _state(tmp_path: Path) -> RunState:
    ep = Endpoint(["http://127.0.0.1:9/v1"], max_in_flight=8, name="e")
    ep.stats.retries, ep.stats.throttled_429, ep.stats.infrastructure = 30, 2, 0
    ep.stats.failed_attempts = 28
    ep.prompt_tokens, ep.completion_tokens = 900, 100
    state = RunState(grid=make_grid(), out=tmp_path, endpoints={"e": ep})
    p = state.progress
    p.total, p.done = 8, 3
    p.cell_total = {"a": 4, "b": 4}
    p.per_cell = {"a": 3}
    p.cell_label = {"a": "raw S=5 rho=0.3", "b": "enforce S=5 rho=0.3"}
    return state


def test_no_live_lines_carry_the_live_views_fields(tmp_path: Path) -> None:
    line = status_line(_state(tmp_path))
    for field in ("episodes 3/8", "elapsed ", "ETA ", "requests in flight 0/8", "retries 30"):
        assert field in line, (field, line)
    assert "429s 2" in line and "tokens/s " in line and "cells raw S=5 rho=0.3 3/4" in line


def test_failed_calls_count_what_the_breaker_counts(tmp_path: Path) -> None:
    from runner.client.call_stats import BreakerTripped, CallStats

    stats = CallStats(endpoint="e", breaker_after=4)
    stats.failure("429 Too Many Requests")  # throttling: retried, not a failed call
    with pytest.raises(BreakerTripped) as tripped:
        for _ in range(4):
            stats.failure("HTTP 503: down")
    state = _state(tmp_path)
    state.endpoints["e"].stats = stats
    assert "4 calls in a row failed" in str(tripped.value)
    assert "failed calls 4 " in counters(state) and "retries 5 " in counters(state)


def test_the_live_view_labels_its_numbers_on_a_fixed_width_console(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    state = _state(tmp_path)
    buf = io.StringIO()
    console = Console(file=buf, width=80, force_terminal=True, color_system=None)
    with live_view(state, console, enabled=True):
        assert state.on_episode is not None
        state.on_episode(None)  # type: ignore[arg-type]
    lines = [x for x in CSI.sub("", buf.getvalue()).splitlines() if x.strip()]
    last = max(i for i, x in enumerate(lines) if x.startswith("episodes "))
    assert FRAME.match(lines[last]) and "3/8" in lines[last], lines
    assert lines[last + 1].startswith("requests in flight 0/8  requests 0  turns 0/0")
    assert "retries 30" in lines[last + 1] and "429s 2" in lines[last + 1]
    assert lines[last + 2].startswith("failed calls 28")  # wrapped at 80 columns
    assert lines[last + 3].startswith("tokens/s generated ")
    assert lines[-1].startswith("cells raw S=5 rho=0.3 3/4") and "enforce" not in lines[-1]
    assert all(len(x) <= 80 for x in lines), lines


def test_the_live_view_refreshes_while_no_episode_ends(tmp_path: Path) -> None:
    """Issue #41: one episode of 44 turns, 80 ms a call: while it runs (no episode has
    ended) the frames' requests, turns and ETA move, refreshed every second from calls."""
    argv = ladder_argv(
        "run", "--seeds", "100", "--arms", "raw", "-S", "5", "--concurrency", "1",
        "--latency", "fixed", "--latency-s", "0.08", "--out", str(tmp_path / "r"),
    )  # fmt: skip
    text = _on_pty(argv, 200)
    lines = [x for x in re.split(r"[\r\n]", text) if x.strip()]
    running: list[tuple[str, str]] = []  # (frame, its counters) while 0 of 1 episodes done
    for i, line in enumerate(lines[:-1]):
        if line.startswith("episodes ") and " 0/1 " in line:
            running.append((line, lines[i + 1]))
    requests = {re.search(r"requests (\d+)", c).group(1) for _, c in running if "requests " in c}  # type: ignore[union-attr]
    turns = {re.search(r"turns (\d+)/", c).group(1) for _, c in running if "turns " in c}  # type: ignore[union-attr]
    assert len(requests) >= 2 and len(turns) >= 2, running
    assert any(not f.rstrip().endswith("-:--:--") for f, _ in running), running  # an ETA
    assert any("tokens/s generated " in c for _, c in running)
    assert any("cells raw S=5 rho=0.15 0/1 +1 running" in x for x in lines), lines[-5:]


def test_tokens_per_second_split_generated_and_prefilled(tmp_path: Path) -> None:
    from runner.execution.live import tokens_per_s

    state = _state(tmp_path)  # 900 prompt, 100 completion tokens, no cache report
    unreported = tokens_per_s(state)
    assert unreported.startswith("tokens/s generated ") and "(cache not reported)" in unreported
    ep = state.endpoints["e"]
    ep.cached_tokens, ep.cache_reports = 900, 3  # every prompt token came from the cache
    assert tokens_per_s(state).endswith(" prefilled 0")
