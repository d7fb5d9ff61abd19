"""``ladder view`` in headless Chromium marks each session restart (the sessions knob, issue
#48): the line before the first turn of every session after the first, and the carried note
in the turn's message apart from what the arm added."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from playwright.async_api import Browser, expect
from rich.console import Console

from runner.execution.grid_run import run_async
from runner.grid.expand import parse_grid
from runner.rundir.logs import read_logs
from runner.viewer.app import serve
from tests.runner.viewer.test_browser import _page, _ready, _shot, browser  # noqa: F401

pytestmark = pytest.mark.browser  # drives Debian's chromium, as test_browser.py


async def test_restarts_and_the_carried_note_are_marked(
    browser: Browser,  # noqa: F811
    tmp_path: Path,
) -> None:
    grid = {
        "run": {
            "seeds": "100",
            "generator": 6,
            "graphs": [{"steps": 10, "density": 0.3}],
            "arms": [],
            "variants": [{"arm": "raw", "sessions": 3, "handoff": "note"}],
        },
        "models": [{"name": "scripted/perfect"}],
    }
    await run_async(parse_grid(grid), tmp_path, console=Console(file=io.StringIO()), live=False)
    (((slug, seed), record),) = read_logs(tmp_path).items()
    opened = [t for t in record.turns if isinstance(t.session, int)]
    assert len(opened) == 2
    runner, url = await serve(tmp_path, 0)
    try:
        page = await _page(browser)
        await page.goto(f"{url}#/episode/{slug}/{seed}")
        await _ready(page, f"#/episode/{slug}/{seed}")
        marks = page.locator("#detail p.session")
        await expect(marks).to_have_count(2)
        await expect(marks.nth(0)).to_have_text("--- session 2 (handoff: note) ---")
        await expect(marks.nth(1)).to_have_text("--- session 3 (handoff: note) ---")
        turn = page.locator(f"#turn-{opened[0].index}")
        await turn.locator("summary").click()
        carried = turn.locator("pre.arm.carried")
        await expect(carried).to_have_count(1)
        await expect(carried).to_contain_text("[HANDOFF NOTE]")
        await expect(page.locator("#main")).not_to_contain_text("undefined")
        await _shot(page, "sessions")
    finally:
        await runner.cleanup()
