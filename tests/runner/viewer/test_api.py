"""``ladder view``'s JSON API over real HTTP on loopback, and the command itself."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import aiohttp
import pytest

from runner.rundir.logs import read_logs
from runner.viewer.app import serve
from scoring.replay.episode_score import score_episode
from tests.view_run import make_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("viewrun"), "100-101")


async def test_api_answers_cells_episodes_and_bad_requests(run_dir: Path) -> None:
    records = read_logs(run_dir)
    (slug, seed), rec = next((k, r) for k, r in sorted(records.items()) if r.cell.arm == "raw")
    runner, url = await serve(run_dir, 0)
    try:
        async with aiohttp.ClientSession() as http:

            async def get(path: str) -> tuple[int, dict]:  # type: ignore[type-arg]
                async with http.get(url + path.lstrip("/")) as r:
                    return r.status, await r.json()

            status, cells = await get("/api/cells")
            assert status == 200 and len(cells["cells"]) == 5
            assert cells["log"]["records"] == len(records)
            status, eps = await get(f"/api/episodes?cell={slug}")
            assert status == 200 and [e["seed"] for e in eps["episodes"]] == [100, 101]
            status, ep = await get(f"/api/episode?cell={slug}&seed={seed}")
            assert status == 200 and len(ep["turns"]) == len(rec.turns)
            assert (await get(f"/api/episode?cell={slug}&seed={seed}&trial=0"))[1] == ep
            assert ep["row"]["strict"] == score_episode(rec).primary.success
            assert {p["arm"] for p in ep["pairs"]} == {
                "checklist", "directive", "enforce", "enforce (corruption=0.02)"
            }  # fmt: skip
            for path, code, needle in [
                (f"/api/episode?cell={slug}&seed=abc", 400, "seed must be an integer"),
                (f"/api/episode?cell={slug}", 400, "missing parameter seed"),
                (f"/api/episodes?cell={slug}&failed=maybe", 400, "failed must be one of"),
                (f"/api/episodes?cell={slug}&channel=nope", 400, "channel must be one of"),
                ("/api/episodes?cell=nosuch", 404, "no cell nosuch"),
                (f"/api/episode?cell={slug}&seed=999", 404, "no episode of seed 999"),
                (f"/api/episode?cell={slug}&seed={seed}&trial=-1", 400, "trial must be at least 0"),
                (f"/api/episode?cell={slug}&seed={seed}&trial=x", 400, "trial must be an integer"),
                (f"/api/episode?cell={slug}&seed={seed}&trial=3", 404, f"seed {seed} trial 3"),
                (f"/api/compare?seed=100&a={slug}&b=nosuch", 404, "not logged in both"),
            ]:
                status, body = await get(path)
                assert status == code and needle in body["error"], path
            async with http.get(url + "static/../../pyproject.toml") as r:
                assert r.status in (403, 404)
            async with http.get(url) as r:
                assert r.status == 200 and "/static/app.js" in await r.text()
    finally:
        await runner.cleanup()


def test_ladder_view_serves_on_loopback_until_stopped(run_dir: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from ladder.app import main; main()",
            "view",
            str(run_dir),
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        indexed = proc.stdout.readline()
        assert indexed.startswith(f"indexed {len(read_logs(run_dir))} episodes"), indexed
        line = proc.stdout.readline()
        assert line.startswith("ladder view: http://127.0.0.1:"), line
        url = line.split()[2]
        with urllib.request.urlopen(url + "api/cells", timeout=30) as r:
            assert r.status == 200 and b'"cells"' in r.read()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
