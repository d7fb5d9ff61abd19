"""The viewer names the served model and shows pass^k (#49, items 2 and 7), in a real
headless Chromium (the browser of :mod:`tests.runner.viewer.test_browser`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from playwright.async_api import Browser, expect
from typer.testing import CliRunner

from ladder.app import app
from runner.viewer.app import serve
from tests.runner.viewer.test_browser import _page, _ready, browser  # noqa: F401

HONEST = "qwen3-235b <- scripted/synthetic"


@pytest.fixture(scope="module")
def trials_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("k2") / "run"
    args = ["run", "--model", "qwen3-235b", "--served", "scripted/synthetic"]
    args += ["--base-url", "embedded", "--arms", "raw", "--steps", "5", "--seeds", "100-101"]
    args += ["--trials", "2", "--temperature", "0.7", "--out", str(out), "--no-live"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    asyncio.set_event_loop_policy(None)
    return out


async def test_pass_k_and_the_label_in_the_viewer(
    trials_run: Path,
    browser: Browser,  # noqa: F811
) -> None:
    runner, url = await serve(trials_run, 0)
    try:
        page = await _page(browser, 1280)
        await page.goto(url)
        await _ready(page, "#/")
        passk = page.locator("#cells .passk")
        await expect(passk).to_have_count(2)  # strict and decline-aware
        await expect(passk.first).to_contain_text("pass^1..2: ")
        await expect(page.locator("#cells tr.config")).to_contain_text(HONEST)
        await page.locator("#cells tbody tr.click").first.click()
        await expect(page.locator("#main")).to_contain_text(f"{HONEST} · ")
        await expect(page.locator("#main")).to_contain_text("SYNTHETIC")
        await page.locator("#episodes tbody tr").first.click()
        await expect(page.locator("#main")).to_contain_text(f"{HONEST} · ")
        await expect(page.locator("#cut")).to_contain_text("cut at budget")  # (#49)
        await expect(page.locator("#cut")).to_contain_text("agent 0/")
    finally:
        await runner.cleanup()
