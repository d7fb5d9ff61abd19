"""Every line ``ladder run`` prints outside the live view's frame fits in 80 columns (#40):
the ``--no-live`` progress lines (about 200 columns as one line before), the notices, the
helpers' summary and the closing line, on a console that would not wrap them itself."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console

from runner.execution.grid_run import run_async
from runner.execution.live import fit, status_line
from tests.reliability_kit import make_grid
from tests.runner.execution.test_live_view import _state


def test_the_no_live_progress_lines_fit_80_columns_and_keep_every_field(tmp_path: Path) -> None:
    state = _state(tmp_path)
    lines = status_line(state).splitlines()
    assert len(lines) >= 3 and all(len(x) <= 80 for x in lines), lines
    text = "  ".join(lines)
    for field in ("episodes 3/8", "elapsed ", "ETA ", "requests in flight 0/8", "retries 30"):
        assert field in text, (field, lines)
    assert lines[-1].startswith("cells raw S=5 rho=0.3 3/4")
    assert lines[0].startswith("episodes 3/8  elapsed ")


def test_fit_wraps_at_spaces_and_keeps_a_long_word_whole() -> None:
    text = "done: 8 episodes run, 0 already done, 0 ended on infrastructure errors " * 2
    out = fit(text).splitlines()
    assert len(out) == 2 and all(len(x) <= 80 for x in out)
    assert out[1].startswith("  ") and " ".join(x.strip() for x in out) == text.strip()
    path = "/x" * 50
    assert fit(f"logs in {path}").splitlines() == ["logs in", f"  {path}"]


def test_a_whole_run_prints_within_80_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a short run directory: a path is never split
    grid = make_grid(seeds="100-101", arms=("raw", "checklist", "directive", "enforce"))
    buf = io.StringIO()
    console = Console(file=buf, width=200, soft_wrap=True, highlight=False)  # no wrapping
    out = Path("r")

    async def main() -> None:
        await run_async(grid, out, console=console, live=False, progress_every_s=0.01)

    asyncio.run(main())
    lines = buf.getvalue().splitlines()
    assert any(x.startswith("episodes ") for x in lines), lines  # a progress line printed
    assert any(x.startswith("helpers:") for x in lines), lines
    assert all(len(x) <= 80 for x in lines), [x for x in lines if len(x) > 80]
