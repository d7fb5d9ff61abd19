"""``ladder view`` in headless Chromium marks the ask-back exchanges on their turns (issue
#38): a question asked back with the user's answer, escalations with the user's answer, and
overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, expect

from protocol import strings
from runner.rundir.logs import read_logs
from runner.viewer.app import serve
from tests.runner.arms.test_askback_oracle import _grid, run
from tests.runner.viewer.test_browser import _page, _ready, _shot, browser  # noqa: F401

pytestmark = pytest.mark.browser  # drives Debian's chromium, as test_browser.py


async def test_questions_escalations_and_overrides_are_marked(
    browser: Browser,  # noqa: F811
    tmp_path: Path,
) -> None:
    variants = [{"arm": "enforce", "ask": "unresolved", "corruption": 1e-2, "escalate": True}]
    await run(
        tmp_path, _grid("scripted/always-book?matcher_none=0.2", [], variants, seeds="100-103")
    )
    records = read_logs(tmp_path)
    (slug, seed), record = next(
        (k, r)
        for k, r in sorted(records.items())
        if any(e.confirmed for t in r.turns for e in t.escalations)
        and any(t.question for t in r.turns)
    )
    asked = next(t for t in record.turns if t.question)
    override = next(t for t in record.turns if any(e.confirmed for e in t.escalations))
    runner, url = await serve(tmp_path, 0)
    try:
        page = await _page(browser)
        await page.goto(f"{url}#/episode/{slug}/{seed}")
        await _ready(page, f"#/episode/{slug}/{seed}")
        turn = page.locator(f"#turn-{asked.index}")
        await expect(turn.locator("summary")).to_contain_text("asked back")
        await turn.locator("summary").click()
        await expect(turn).to_contain_text("gate asked back (unresolved; first reading none)")
        await expect(turn).to_contain_text(strings.ASK_WHICH)
        await expect(turn).to_contain_text(asked.answer or "")
        turn = page.locator(f"#turn-{override.index}")
        await expect(turn.locator("summary")).to_contain_text("override 1")
        await turn.locator("summary").click()
        await expect(turn).to_contain_text("[GATE ESCALATION] I refused the booking")
        await expect(turn).to_contain_text(strings.USER_CONFIRM)
        await expect(turn).to_contain_text("override: admitted once")
        await expect(page.locator("#main")).not_to_contain_text("undefined")
        await _shot(page, "askback")
    finally:
        await runner.cleanup()
