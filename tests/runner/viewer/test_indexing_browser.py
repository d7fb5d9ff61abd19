"""The page of a large run's overview while its index is being built (#50), in a real
headless Chromium: the cells and the contrasts of the episodes in so far under the indexing
line (a contrast's p-value waits on no import: #50, twelfth round), the line gone once the
build is done."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, expect

from runner.viewer.app import serve
from tests.runner.viewer.test_browser import _page, _ready, _shot, _unindexed_copy, browser
from tests.runner.viewer.test_view_indexing import _hold_the_end, _on_two_workers
from tests.view_run import make_run

__all__ = ["browser"]  # the fixture, imported for pytest


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("indexingpage"))


async def test_the_page_while_indexing_shows_the_cells_and_the_contrasts(
    run_dir: Path, browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = _unindexed_copy(run_dir, tmp_path)
    _on_two_workers(monkeypatch)
    hold = _hold_the_end(monkeypatch)  # every file in, the build's end held
    runner, url = await serve(live, 0)
    try:
        page = await _page(browser)
        await page.goto(url)
        await _ready(page, "#/")
        await expect(page.locator("#indexing")).to_contain_text("indexing: 5 of 5 log files")
        await expect(page.locator("#cells tbody tr.click")).to_have_count(5)
        await expect(page.locator("#contrasts tbody tr")).not_to_have_count(0)
        await _shot(page, "cells-indexing")
        hold.set()
        await expect(page.locator("#indexing")).to_have_count(0)
        await expect(page.locator("#contrasts tbody tr")).not_to_have_count(0)
    finally:
        hold.set()
        await runner.cleanup()
