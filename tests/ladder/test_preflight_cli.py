"""``ladder probe`` and ``ladder paraphrase`` against an endpoint that does not answer
(#40, items 3 and 4): the endpoint line and a preflight first, then one ``error:`` line,
never a traceback and never minutes of silence; ``probe --no-live`` prints progress lines."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from ladder.app import app

DEAD = "http://127.0.0.1:9/v1"  # the discard port: nothing listens


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("probe") / "run"
    args = ["run", "--model", "scripted/synthetic", "--arms", "raw", "--seeds", "100-101"]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--no-live"])
    assert result.exit_code == 0, result.output
    asyncio.set_event_loop_policy(None)
    return out


def _moved(run: Path, tmp: Path, url: str) -> Path:
    """A copy of the finished run whose manifest points its endpoint at ``url``."""
    moved = tmp / "moved"
    moved.mkdir()
    (moved / "logs").symlink_to(run / "logs")
    manifest = orjson.loads((run / "manifest.json").read_bytes())
    manifest["grid"]["endpoints"][0]["base_url"] = url
    (moved / "manifest.json").write_bytes(orjson.dumps(manifest))
    return moved


def test_probe_against_a_dead_endpoint_is_one_line(finished: Path, tmp_path: Path) -> None:
    run = _moved(finished, tmp_path, DEAD)
    result = CliRunner().invoke(app, ["probe", str(run), "--out", str(tmp_path / "p")])
    assert result.exit_code == 2
    lines = result.output.splitlines()
    errors = [x for x in lines if x.startswith("error:")]
    assert len(errors) == 1 and DEAD in errors[0] and "Traceback" not in result.output
    named = [i for i, x in enumerate(lines) if x.startswith(f"endpoint cli: {DEAD}")]
    assert named and named[0] < lines.index(errors[0])
    assert any(x.startswith("preflight (cli)") for x in lines)
    log = tmp_path / "p" / "probe.jsonl"
    assert not log.exists() or not log.read_bytes()  # no re-ask was made


def test_probe_no_live_prints_progress_lines(finished: Path, tmp_path: Path) -> None:
    args = ["probe", str(finished), "--out", str(tmp_path / "p"), "--samples", "0", "--no-live"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    progress = [x for x in result.output.splitlines() if x.startswith("re-asks ")]
    assert progress and progress[-1].startswith("re-asks 40/40")


def test_paraphrase_on_a_wrong_port_is_one_line(tmp_path: Path) -> None:
    args = ["paraphrase", "--model", "m", "--base-url", DEAD, "--out", str(tmp_path / "c.json")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert lines[0] == f"endpoint rewriter: {DEAD}" and lines[1].startswith("preflight")
    assert lines[2].startswith("error: the rewriter endpoint did not answer:") and DEAD in lines[2]
    assert len(lines) == 3


def test_a_finished_run_reruns_without_its_server(finished: Path) -> None:
    """Nothing left to run needs no server: no preflight, exit 0 (#40, item 9)."""
    args = ["run", "--model", "scripted/synthetic", "--arms", "raw", "--seeds", "100-101"]
    result = CliRunner().invoke(app, [*args, "--base-url", DEAD, "--out", str(finished)])
    assert result.exit_code == 0, result.output
    assert "preflight" not in result.output, result.output
    assert "0 episodes run, 2 already done" in result.output
