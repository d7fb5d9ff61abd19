"""The page of a large run's overview while scipy's statistics load (#50), in a real headless
Chromium: the contrasts' table empty under a line saying they wait, filled by the page's own
next ask once scipy is in, while the index is still being built."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, expect

import runner.viewer.data as data_mod
from runner.viewer.app import serve
from tests.runner.viewer.test_browser import _page, _ready, _shot, _unindexed_copy, browser
from tests.runner.viewer.test_view_pending import _hold_the_end, _on_two_workers
from tests.view_run import make_run

__all__ = ["browser"]  # the fixture, imported for pytest


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("pendingpage"))


async def test_the_page_says_the_contrasts_wait_for_scipy_then_shows_them(
    run_dir: Path, browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = _unindexed_copy(run_dir, tmp_path)
    _on_two_workers(monkeypatch)
    loaded = [False]
    monkeypatch.setattr(data_mod, "stats_loaded", lambda: loaded[0])
    hold = _hold_the_end(monkeypatch)  # every file in, the build's end held
    runner, url = await serve(live, 0)
    try:
        page = await _page(browser)
        await page.goto(url)
        await _ready(page, "#/")
        await expect(page.locator("#indexing")).to_contain_text("indexing: 5 of 5 log files")
        await expect(page.locator("#pending")).to_contain_text(
            "contrasts: their exact McNemar p-values wait for the statistics library (scipy)"
        )
        await expect(page.locator("#cells tbody tr.click")).to_have_count(5)
        await expect(page.locator("#contrasts tbody tr")).to_have_count(0)
        await _shot(page, "cells-pending")
        loaded[0] = True  # scipy in: the page's next ask (a second later) has the contrasts
        await expect(page.locator("#pending")).to_have_count(0)
        await expect(page.locator("#contrasts tbody tr")).not_to_have_count(0)
        await expect(page.locator("#indexing")).to_have_count(1)
        hold.set()
        await expect(page.locator("#indexing")).to_have_count(0)
    finally:
        hold.set()
        await runner.cleanup()
