"""``ladder view`` in a real headless Chromium (Debian's ``chromium`` package, driven by
Playwright without a browser download): cells -> a cell's failed episodes -> a failed
episode -> one of its failing turns -> the same seed under another arm; then a run that grows
while the page is open. A screenshot of each view goes to tests/artifacts/view/ (printed).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from playwright.async_api import Browser, Page, async_playwright, expect

from protocol import generate
from runner.rundir.logs import read_logs
from runner.viewer.app import serve
from runner.viewer.index import INDEX_FILE
from scoring.replay.episode_score import score_episode
from tests.view_run import DEFECTIVE_COMPILER, MODEL, make_run

CHROMIUM = "/usr/bin/chromium"


def _chromium() -> str:
    """Debian's chromium (``.ci/run`` installs it; a test never installs a package). Missing,
    the browser tests skip with the command that installs it, except under CI (``CI`` set),
    where a missing browser fails them."""
    found = shutil.which("chromium") or (CHROMIUM if Path(CHROMIUM).exists() else None)
    if found is None:
        why = "Debian's chromium is missing: apt-get install chromium (.ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    return found


SHOTS = Path(__file__).parent.parent.parent / "artifacts" / "view"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("viewrun"))


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    chromium = _chromium()
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            yield b
        finally:
            await b.close()


def _unindexed_copy(run_dir: Path, tmp_path: Path) -> Path:
    """A copy of the run without its index file: the viewer builds a first index (not
    another test's)."""
    live = tmp_path / "live"
    shutil.copytree(run_dir, live)
    (live / INDEX_FILE).unlink(missing_ok=True)
    return live


async def _page(browser: Browser, width: int = 1400) -> Page:
    page = await browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(15_000)
    return page


async def _ready(page: Page, hash_: str) -> None:
    """Wait until the page has drawn the route *hash_* (the page marks it on <body>)."""
    await page.wait_for_function(
        "h => decodeURIComponent(document.body.dataset.ready || '') === h", arg=hash_
    )


async def _shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=name in ("cells", "episodes"))
    print(f"screenshot: {path}")


async def test_cell_to_failed_episode_to_turn_to_side_by_side(
    run_dir: Path, browser: Browser
) -> None:
    records = read_logs(run_dir)
    runner, url = await serve(run_dir, 0)
    try:
        page = await _page(browser)
        await page.goto(url)
        await _ready(page, "#/")
        # --- the cells: both scorings with CIs, channel counts, cost --------------------
        cells = page.locator("#cells tbody tr.click")
        await expect(cells).to_have_count(5)
        raw = page.locator("#cells tbody tr.click", has_text="raw").first
        # how many raw episodes the synthetic agent fails is its dice's (paired by seed and
        # turn, #46): read from the logs, at least one
        failed = sum(
            r.cell.arm == "raw" and not score_episode(r).primary.success for r in records.values()
        )
        assert failed >= 1
        await expect(raw).to_contain_text(f"{4 - failed}/4")
        assert "[" in await raw.inner_text()  # a Wilson interval
        await expect(page.locator("#cells")).to_contain_text("enforce (corruption=0.02)")
        # three ladder rungs and the corrupted variant against its paper arm, per scoring
        await expect(page.locator("#contrasts tbody tr")).to_have_count(8)
        await _shot(page, "cells")

        # --- a cell's episodes, failed only ----------------------------------------------
        slug = await raw.get_attribute("data-slug")
        assert slug is not None and slug.endswith("__raw")
        await raw.click()
        await expect(page.locator("#episodes tbody tr")).to_have_count(4)
        await page.locator("#f-failed").check()
        await _ready(page, f"#/cell/{slug}?failed=strict")
        rows = page.locator("#episodes tbody tr")
        await expect(rows).to_have_count(failed)
        await expect(page.locator("#count")).to_have_text(f"{failed} of 4 episodes")
        for i in range(failed):
            await expect(rows.nth(i).locator("td").nth(1)).to_have_text("fail")
        await page.select_option("#f-channel", "re_execution")
        await expect(page.locator("#episodes tbody tr").first).to_contain_text("re_execution")
        await _shot(page, "episodes")

        # --- a failed episode, then one of its failing turns -----------------------------
        first = page.locator("#episodes tbody tr").first
        seed = int(await first.get_attribute("data-seed") or "-1")
        await first.click()
        await _ready(page, f"#/episode/{slug}/{seed}")
        await expect(page.locator("#header")).to_contain_text("fail")
        await expect(page.locator("#main")).not_to_contain_text("null")
        await _shot(page, "episode")
        record = records[(slug, seed)]
        failing = page.locator("#turns tr.failed")
        assert await failing.count() >= 1
        await page.check("#only-failing")
        await expect(page.locator("#detail details.turn:visible")).to_have_count(
            await failing.count()
        )
        await expect(page.locator("#turns tr[data-index]:visible")).to_have_count(
            await failing.count()
        )
        index = int(await failing.first.get_attribute("data-index") or "-1")
        await failing.first.click()
        await _ready(page, f"#/episode/{slug}/{seed}/{index}")
        turn = page.locator(f"#turn-{index}")
        await expect(turn).to_have_class("turn failed current")
        await expect(turn).to_have_attribute("open", "")
        await expect(turn.locator("summary")).to_contain_text("re_execution")
        logged = record.turns[index]
        await expect(turn.locator("pre.reply")).to_have_text(logged.reply)
        await expect(turn.locator("pre.user")).to_have_text(logged.user_text)
        await expect(turn).to_contain_text(f"{logged.admitted[0].code} {logged.work_order}")
        await expect(turn).to_contain_text("calls")
        await expect(page.locator(f'#turns tr[data-index="{index}"]')).to_have_class(
            "click failed selected"
        )
        await _shot(page, "turn")

        # --- the same seed under the enforcement gate ------------------------------------
        enforce = slug.removesuffix("raw") + "enforce"
        await page.select_option("#pair", enforce)
        await page.click("#compare")
        await _ready(page, f"#/compare/{seed}/{slug}/{enforce}")
        differs = page.locator("#compare tr.differs")
        assert await differs.count() >= 1
        await expect(page.locator("#differing")).to_contain_text("turns differ in outcome")
        # raw's re-execution is among the turns that differ (the first may be another turn:
        # which, is the synthetic agent's paired dice, #46)
        await expect(differs.filter(has_text="re_execution").first).to_be_visible()
        await page.check("#only-differing")
        await expect(page.locator("#compare tr.pair:visible")).to_have_count(await differs.count())
        await _shot(page, "compare")

        # --- a gate episode: compiled graph against the generator's, corruption events ---
        corrupted = next(
            (s, k) for (s, k), r in sorted(records.items()) if r.corruptions and "corruption" in s
        )
        await page.goto(f"{url}#/episode/{corrupted[0]}/{corrupted[1]}")
        await _ready(page, f"#/episode/{corrupted[0]}/{corrupted[1]}")
        await expect(page.locator("#compile tr")).to_have_count(1 + 6)
        await expect(page.locator("#corruptions li")).to_have_count(
            len(records[corrupted].corruptions)
        )
        await page.locator("#compile").scroll_into_view_if_needed()
        await _shot(page, "compile")
    finally:
        await runner.cleanup()


async def test_the_compiled_graph_differences_are_marked(browser: Browser, tmp_path: Path) -> None:
    run_dir = tmp_path / "defect"
    await _in_thread(make_run, run_dir, "100-101", DEFECTIVE_COMPILER, ["enforce"])
    ((slug, seed), rec), *_ = sorted(read_logs(run_dir).items())
    assert rec.compile is not None
    truth = {s.id: s.code for s in generate(rec.spec).steps}
    wrong = [s.id for s in rec.compile.graph if s.code != truth[s.id]]
    assert wrong, "the defective compiler compiled every code right"
    runner, url = await serve(run_dir, 0)
    try:
        page = await _page(browser)
        await page.goto(f"{url}#/episode/{slug}/{seed}")
        await _ready(page, f"#/episode/{slug}/{seed}")
        marked = page.locator("#compile tr:has(td.diff) td:first-child")
        await expect(marked).to_have_text(wrong)
        await expect(page.locator("#compile td.diff").last).to_have_text("(empty)")
        await expect(page.locator("#detail")).to_contain_text(
            f"steps differing from the generator: {len(wrong)}"
        )
        await page.locator("#compile").scroll_into_view_if_needed()
        await _shot(page, "compile-defect")
    finally:
        await runner.cleanup()


async def test_a_run_in_progress_shows_new_episodes_on_reload(
    run_dir: Path, browser: Browser, tmp_path: Path
) -> None:
    live = tmp_path / "live"
    shutil.copytree(run_dir, live)
    runner, url = await serve(live, 0)
    try:
        page = await _page(browser)
        await page.goto(url)
        await _ready(page, "#/")
        raw = page.locator("#cells tbody tr.click", has_text="raw").first
        await expect(raw.locator("td").nth(1)).to_have_text("4")
        # the run goes on: two more seeds (the runner resumes into the same directory)
        await _in_thread(make_run, live, "100-105")
        await page.reload()
        await _ready(page, "#/")
        await expect(raw.locator("td").nth(1)).to_have_text("6")
        await expect(page.locator("#main")).to_contain_text("30 episodes in 5 log files")
    finally:
        await runner.cleanup()


async def _in_thread(fn: object, *args: object) -> None:
    """The runner drives its own event loop; run it beside the server's."""
    import asyncio

    await asyncio.to_thread(fn, *args)  # type: ignore[arg-type]


async def _fits(page: Page, selector: str) -> None:
    """Nothing of the page, and no part of *selector*, runs past the window's right edge."""
    width = await page.evaluate("window.innerWidth")
    assert await page.evaluate("document.documentElement.scrollWidth") <= width
    right = await page.evaluate(
        "s => document.querySelector(s).getBoundingClientRect().right", selector
    )
    assert right <= width, f"{selector} ends at {right} px of {width}"


async def test_at_1024_px_refusals_configurations_and_re_executions_are_told_apart(
    run_dir: Path, browser: Browser
) -> None:
    records = read_logs(run_dir)
    runner, url = await serve(run_dir, 0)
    try:
        page = await _page(browser, 1024)
        failed: list[str] = []
        page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
        await page.goto(url)
        await _ready(page, "#/")
        await _fits(page, "#cells")
        # "da N" is explained under the table and on each note
        await expect(page.locator("#da-note")).to_contain_text("decline-aware scoring")
        da = page.locator("#cells div.da")
        assert await da.count() >= 1
        assert "decline-aware scoring" in (await da.first.get_attribute("title") or "")
        await _shot(page, "cells-1024")

        # a booking the gate refused marks its turn (the verdict itself may be "ok")
        (slug, seed), rec = next(
            (k, r) for k, r in sorted(records.items()) if any(t.refused for t in r.turns)
        )
        refusing = [t.index for t in rec.turns if t.refused]
        await page.goto(f"{url}#/episode/{slug}/{seed}")
        await _ready(page, f"#/episode/{slug}/{seed}")
        for i in refusing:
            n = len(rec.turns[i].refused)
            await expect(page.locator(f"#turn-{i} summary")).to_contain_text(f"gate refused {n}")
            await expect(page.locator(f'#turns tr[data-index="{i}"]')).to_contain_text(
                "gate refused"
            )
        marked = page.locator("#detail details.turn.refused")
        await expect(marked).to_have_count(len(refusing))
        await expect(page.locator("#refused-note a")).to_have_count(len(refusing))
        # the header's helper calls are the cost module's (needed, made, cached)
        await expect(page.locator("#helpers")).to_contain_text("needed")
        await _fits(page, "#detail")
        await _shot(page, "episode-refused-1024")

        # a re-execution links to the turn that executed the step before
        (slug, seed), rec = next(
            (k, r)
            for k, r in sorted(records.items())
            if r.cell.arm == "raw" and score_episode(r).primary.channels["re_execution"]
        )
        await page.goto(f"{url}#/episode/{slug}/{seed}")
        await _ready(page, f"#/episode/{slug}/{seed}")
        link = page.locator("#detail details.turn.failed summary a.orig").first
        href = await link.get_attribute("href") or ""
        original = int(href.rsplit("/", 1)[1])
        step = (await link.get_attribute("title") or "").split()[1]
        await link.click()
        await _ready(page, f"#/episode/{slug}/{seed}/{original}")
        await expect(page.locator(f"#turn-{original}")).to_have_class(re.compile("current"))
        await expect(page.locator(f"#turn-{original} .body")).to_contain_text(step)
        scored = {t.index: t for t in score_episode(rec).primary.turns}
        assert step in scored[original].executed
        await _shot(page, "re-execution-link")
        assert failed == [], failed  # no 404: the page has its icon
    finally:
        await runner.cleanup()


async def test_the_contrasts_name_their_configuration(browser: Browser, tmp_path: Path) -> None:
    run_dir = tmp_path / "configs"
    configs = {"domains": ["procurement", "release"], "briefs": ["amended", "original"]}
    await _in_thread(make_run, run_dir, "100-101", MODEL, ["raw", "checklist"], configs)
    runner, url = await serve(run_dir, 0)
    try:
        page = await _page(browser, 1024)
        await page.goto(url)
        await _ready(page, "#/")
        rows = page.locator("#contrasts tbody tr", has_text="raw → checklist").filter(
            has_text="strict"
        )
        await expect(rows).to_have_count(4)
        configs_shown = {await rows.nth(i).locator("td.config").inner_text() for i in range(4)}
        assert len(configs_shown) == 4
        assert any("release" in c and "original" in c for c in configs_shown)
        await _fits(page, "#cells")
        async with aiohttp.ClientSession() as http, http.get(url + "favicon.ico") as r:
            assert r.status == 200 and "svg" in r.content_type
    finally:
        await runner.cleanup()


async def test_at_1280_px_the_turn_lists_error_badges_are_whole(
    run_dir: Path, browser: Browser
) -> None:
    """#40, item 9: the turn list's error badges were cut at 1280 px (the list's column
    scrolled sideways); they wrap inside it now."""
    records = read_logs(run_dir)

    def pills(r: object) -> int:
        score = score_episode(r)  # type: ignore[arg-type]
        return max((len(t.errors) for t in score.primary.turns), default=0)

    (slug, seed), _ = max(sorted(records.items()), key=lambda kv: pills(kv[1]))
    runner, url = await serve(run_dir, 0)
    try:
        page = await _page(browser, 1280)
        await page.goto(f"{url}#/episode/{slug}/{seed}")
        await _ready(page, f"#/episode/{slug}/{seed}")
        toc = page.locator(".layout > .toc")
        overflow = await toc.evaluate("e => e.scrollWidth - e.clientWidth")
        assert overflow <= 0, f"the turn list runs {overflow} px past its column"
        await _fits(page, "#turns")
    finally:
        await runner.cleanup()


async def test_the_header_carries_the_synthetic_warning_and_the_run_details(
    run_dir: Path, browser: Browser
) -> None:
    """#40, items 1 and 8: the cells page says the agent is synthetic and shows the run's
    details from its manifest (models, decoding, seeds, git revision, ...)."""
    runner, url = await serve(run_dir, 0)
    try:
        page = await _page(browser, 1280)
        await page.goto(url)
        await _ready(page, "#/")
        await expect(page.locator("#synthetic")).to_contain_text("SYNTHETIC")
        await expect(page.locator("#synthetic")).to_contain_text("scripted synthetic agent")
        details = page.locator("#details")
        await details.locator("summary").click()
        for field in ("model", "decoding", "seeds", "generator", "started"):
            await expect(details.locator("th", has_text=field).first).to_be_visible()
        await expect(details).to_contain_text("temperature")
        await _fits(page, "#details")
    finally:
        await runner.cleanup()


async def test_several_runs_in_one_view(run_dir: Path, browser: Browser, tmp_path: Path) -> None:
    """#40, item 7: ``ladder view runs/a runs/b``: one page, a picker of the runs; the cells
    and episodes shown are the picked run's."""
    other = tmp_path / "other"
    await _in_thread(make_run, other, "100-101", "scripted/perfect", ["raw"])
    runner, url = await serve([run_dir, other], 0)
    try:
        page = await _page(browser, 1280)
        await page.goto(url)
        await _ready(page, "#/")
        picker = page.locator("#runs")
        await expect(picker.locator("option")).to_have_count(2)
        first = await page.locator("#cells tbody tr.click").count()
        await picker.select_option("1")
        await page.wait_for_url(re.compile(r"\?run=1"))
        await _ready(page, "#/")
        await expect(page.locator("#runs")).to_have_value("1")
        rows = page.locator("#cells tbody tr.click")
        await expect(rows).to_have_count(1)  # the other run: one raw cell
        assert first > 1
        await expect(page.locator("#cells tr.config")).to_contain_text("scripted/perfect")
        await rows.first.click()
        await expect(page.locator("#main")).to_contain_text("seed")
        async with aiohttp.ClientSession() as http, http.get(url + "api/cells?run=2") as r:
            assert r.status == 400  # no third run: one line, no traceback
    finally:
        await runner.cleanup()


async def test_each_trial_of_a_seed_has_its_page(browser: Browser, tmp_path: Path) -> None:
    """#40, --trials: a cell's list holds every trial of each seed; trial 1's row opens trial
    1's page, whose side by side is trial 1 under another arm."""
    from typer.testing import CliRunner

    from ladder.app import app

    out = tmp_path / "k2"
    args = ["run", "--model", "scripted/synthetic", "--arms", "raw,enforce", "-S", "5"]
    args += ["--seeds", "100-101", "--trials", "2", "--temperature", "0.7", "--no-live"]
    done = await asyncio.to_thread(CliRunner().invoke, app, [*args, "--out", str(out)])
    assert done.exit_code == 0, done.output
    runner, url = await serve(out, 0)
    try:
        page = await _page(browser)
        await page.goto(url)
        await _ready(page, "#/")
        await page.locator("#cells a", has_text="raw").first.click()
        rows = page.locator("#episodes tbody tr")
        await expect(rows).to_have_count(4)
        await expect(rows.nth(1)).to_contain_text("seed 100 · trial 1")
        await page.locator('#episodes tr[data-seed="100"][data-trial="1"]').click()
        await page.wait_for_url(re.compile(r"#/episode/.+/100\?trial=1$"))
        await expect(page.locator("h1")).to_contain_text("seed 100 · trial 1")
        await page.locator("#compare").click()
        await page.wait_for_url(re.compile(r"#/compare/100/.+\?trial=1$"))
        await expect(page.locator("h1")).to_contain_text("Seed 100 · trial 1: raw vs enforce")
    finally:
        await runner.cleanup()


async def test_a_large_first_index_fills_the_page_as_it_goes(
    run_dir: Path, browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first index built in the background (#50): the page answers with the files indexed
    so far under an "indexing" line, asks again by itself, and ends with every episode."""
    import runner.viewer.build as build_mod
    import runner.viewer.index as index_mod
    from tests.runner.viewer.test_index import _gated_task

    live = _unindexed_copy(run_dir, tmp_path)
    monkeypatch.setattr(index_mod, "cores", lambda: 2)
    monkeypatch.setattr(index_mod, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(build_mod, "config_groups", lambda paths, **_: [[str(p)] for p in paths])
    monkeypatch.setattr(build_mod, "index_task", _gated_task)  # one file in, the rest held
    runner, url = await serve(live, 0)
    try:
        page = await _page(browser)
        await page.goto(url)
        await _ready(page, "#/")
        await expect(page.locator("#indexing")).to_contain_text("indexing: 1 of 5 log files")
        await expect(page.locator("#cells tbody tr.click")).to_have_count(1)
        await _shot(page, "cells-indexing")
        (live / "gate").touch()
        await expect(page.locator("#indexing")).to_have_count(0)
        await expect(page.locator("#cells tbody tr.click")).to_have_count(5)
        await expect(page.locator("#main")).to_contain_text("20 episodes in 5 log files")
    finally:
        await runner.cleanup()
