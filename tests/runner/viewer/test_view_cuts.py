"""The viewer's cell list shows the share of replies cut at their token budget and marks a
cell past :data:`CUT_WARN_SHARE` (#49, item 8): through ``/api/cells`` over real HTTP, and
in a real headless Chromium (:mod:`tests.runner.viewer.test_browser`'s)."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
import pytest
from playwright.async_api import Browser, expect

from runner.viewer.app import serve
from scoring.analyses.truncation import CUT_WARN_SHARE
from tests.ladder.test_cut_replies import CUT_ARGS, cut_run
from tests.runner.viewer.test_browser import _page, _ready, browser  # noqa: F401


@pytest.fixture(scope="module")
def cut_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return cut_run(tmp_path_factory.mktemp("cutview") / "run", *CUT_ARGS)


async def test_api_cells_count_cut_replies_and_mark_the_cells(cut_dir: Path) -> None:
    runner, url = await serve(cut_dir, 0)
    try:
        async with aiohttp.ClientSession() as http, http.get(url + "api/cells") as r:
            assert r.status == 200
            data = await r.json()
    finally:
        await runner.cleanup()
    assert data["cut_threshold"] == CUT_WARN_SHARE
    cells = {c["line"]["cell"]["arm"]: c for c in data["cells"]}
    raw, enforce = cells["raw"], cells["enforce"]
    n, made = raw["line"]["cut"]["agent"]
    assert 0 < n <= made and n / made > CUT_WARN_SHARE
    assert raw["cut_over"] == ["agent"]
    assert raw["line"]["cut"]["matcher"] == [0, 0]
    m, m_made = enforce["line"]["cut"]["matcher"]
    assert m == m_made > 0 and "matcher" in enforce["cut_over"]


async def test_the_cell_list_shows_the_cut_share_and_the_warning(
    cut_dir: Path,
    browser: Browser,  # noqa: F811
) -> None:
    runner, url = await serve(cut_dir, 0)
    try:
        page = await _page(browser, 1280)
        await page.goto(url)
        await _ready(page, "#/")
        cut = page.locator("#cells div.cut")
        await expect(cut).to_have_count(2)  # raw and enforce, each past the threshold
        await expect(cut.first).to_have_text(re.compile(r"^cut \d+% ⚠$"))
        title = await cut.last.get_attribute("title") or ""
        assert "matcher " in title and "replies cut at their token budget" in title
        await expect(page.locator("p.cutwarn")).to_have_count(2)
        await expect(page.locator("p.cutwarn").last).to_contain_text("matcher replies")
    finally:
        await runner.cleanup()
