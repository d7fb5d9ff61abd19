"""``ladder probe`` end to end against the scripted endpoint (real HTTP on loopback): a run,
its trap turns re-asked under every variant, the report; the perfect agent's re-executions,
the synthetic agent's dependence on the variants, resume after a torn write."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from protocol.probe.turns import VARIANTS, ProbeRecord
from runner.grid.expand import parse_grid
from runner.probe.options import ProbeOptions
from runner.probe.probe_dir import PROBE_LOG, read_probe
from runner.probe.reask import run_probe
from scoring.analyses.probe import probe_table, reask_row
from tests.reliability_kit import grid_data, ladder, ladder_argv, run_inprocess

SYNTH = "scripted/synthetic?fresh=0.35&confirm_ask=2&status_ask=0.3&seed=3"
PERFECT = "scripted/perfect"


def _run(tmp: Path, model: str, seeds: str = "100-105") -> Path:
    data = grid_data(seeds=seeds, steps=10, arms=["raw"], timeout_s=30.0)
    data["models"] = [{"name": model, "endpoint": "embedded"}]
    out = tmp / "run"
    summary, _ = asyncio.run(run_inprocess(parse_grid(data), out))
    assert summary["infrastructure"] == 0
    return out


def _probe(run: Path, out: Path, **kw: Any) -> tuple[Any, list[ProbeRecord]]:
    opts = ProbeOptions(**kw)
    summary = asyncio.run(run_probe(run, out, opts))
    return summary, read_probe(out)


@pytest.fixture(scope="module")
def perfect(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[ProbeRecord]]:
    tmp = tmp_path_factory.mktemp("perfect")
    run = _run(tmp, PERFECT)
    _, recs = _probe(run, tmp / "probe", samples=2)
    return tmp / "probe", recs


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[ProbeRecord]]:
    tmp = tmp_path_factory.mktemp("synthetic")
    run = _run(tmp, SYNTH, seeds="100-115")
    _, recs = _probe(run, tmp / "probe", samples=4)
    return run, tmp / "probe", recs


def test_perfect_agent_re_executes_zero_times_under_every_variant(
    perfect: tuple[Path, list[ProbeRecord]],
) -> None:
    _, recs = perfect
    traps = {(r.episode_id, r.turn) for r in recs}
    assert len(traps) == 12  # two redo probes per episode, each on a done step
    assert all(not r.recorded_rebooked and not r.synthetic for r in recs)
    assert all(r.harness == "text" for r in recs)
    # every variant applied to every trap (greedy + 2 samples), and none re-executed: under
    # prose / erased the perfect agent reads its own narration (docs/probe.md)
    assert Counter(r.variant for r in recs) == {v: 12 * 3 for v in VARIANTS}
    assert not [r for r in recs if r.reexecuted]
    # it said so: a confirmation, not a refusal it could not place
    assert all("already done" in r.reply for r in recs if r.variant != "no_work_order")
    # the card fallback (no card for a scripted model) is what the sampled re-asks used
    sampled = [r for r in recs if r.decoding == "sampled"]
    assert {(r.temperature, r.top_p, r.top_k) for r in sampled} == {(0.7, 0.8, None)}
    greedy = [r for r in recs if r.decoding == "greedy"]
    assert {(r.temperature, r.top_p) for r in greedy} == {(0.0, None)}


def test_synthetic_agent_re_execution_depends_on_the_variant(
    synthetic: tuple[Path, Path, list[ProbeRecord]],
) -> None:
    _, _, recs = synthetic
    assert all(r.synthetic for r in recs)
    share = {
        v: sum(r.reexecuted for r in recs if r.variant == v and r.decoding == "sampled")
        / max(1, sum(r.variant == v and r.decoding == "sampled" for r in recs))
        for v in VARIANTS
    }
    assert share["no_work_order"] == 0.0  # nothing to book without a number
    assert share["directive_user"] < share["as_recorded"]
    assert share["checklist_user"] < share["as_recorded"]
    assert share["erased"] > 0.9 and share["prose"] > 0.9
    # the grid's synthetic agent is told to double its rate on the confirm wording and cut
    # it to 0.3x on a status question (confirm_ask, status_ask)
    assert share["status"] < share["as_recorded"] < share["confirm"]
    # the samples differ (the request's seed reaches the synthetic agent's dice)
    replies = {r.reply for r in recs if r.variant == "as_recorded" and r.decoding == "sampled"}
    assert len(replies) > 1
    # greedy as-recorded reproduces the recorded outcome (same request, same reply)
    greedy = [r for r in recs if r.variant == "as_recorded" and r.decoding == "greedy"]
    assert greedy and all(r.reexecuted == r.recorded_rebooked for r in greedy)
    table = probe_table([reask_row(r) for r in recs])
    assert table.greedy_reproduction == 1.0


def test_resume_skips_done_keys_and_redoes_a_torn_line(
    synthetic: tuple[Path, Path, list[ProbeRecord]], tmp_path: Path
) -> None:
    run, _, _ = synthetic
    out = tmp_path / "probe"
    first, recs = _probe(run, out, variants=("as_recorded", "erased"), samples=2, limit=5)
    assert first.asked == len(recs) == 5 * 2 * 3 and first.skipped == 0
    path = out / PROBE_LOG
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # a kill tore the last line
    again, recs2 = _probe(run, out, variants=("as_recorded", "erased"), samples=2, limit=5)
    assert again.skipped == 29 and again.asked == 1
    keys = [r.key() for r in recs2]
    assert len(keys) == len(set(keys)) == 30
    more, recs3 = _probe(
        run, out, variants=("as_recorded", "erased", "confirm"), samples=2, limit=5
    )
    assert more.skipped == 30 and more.asked == 15 and len(recs3) == 45


def test_cli_probe_and_report(synthetic: tuple[Path, Path, list[ProbeRecord]]) -> None:
    _, probe_dir, recs = synthetic
    text = ladder("probe", "--report", str(probe_dir))
    assert text.returncode == 0, text.stderr
    assert "SYNTHETIC" in text.stdout and "as_recorded" in text.stdout
    png = probe_dir.parent / "probe.png"
    js = ladder("probe", "--report", str(probe_dir), "--json", "--png", str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert js.returncode == 0, js.stderr
    groups = orjson.loads(js.stdout)["groups"]
    assert [(g["model"], g["arm"], g["harness"]) for g in groups] == [(SYNTH, "raw", "text")]
    table = groups[0]["table"]
    rows = {(r["variant"], r["decoding"]): r for r in table["rows"]}
    assert set(rows) == {(v, d) for v in VARIANTS for d in ("greedy", "sampled")}
    erased = [r for r in recs if r.variant == "erased" and r.decoding == "sampled"]
    assert rows[("erased", "sampled")]["n"] == len(erased)
    assert rows[("erased", "sampled")]["reexecuted"] == sum(r.reexecuted for r in erased)
    lo, hi = rows[("erased", "sampled")]["ci"]
    assert lo <= rows[("erased", "sampled")]["share"] <= hi


def test_cli_bad_input_is_one_line(tmp_path: Path) -> None:
    for args in (
        ("probe", str(tmp_path), "--out", str(tmp_path / "p")),  # no manifest
        ("probe", str(tmp_path / "missing"), "--out", str(tmp_path / "p")),
        ("probe", str(tmp_path), "--out", str(tmp_path / "p"), "--variants", "nope"),
        ("probe", "--report", str(tmp_path)),  # no records
        ("probe",),
    ):
        res = ladder(*args)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_kill_and_resume_gives_the_uninterrupted_records(
    synthetic: tuple[Path, Path, list[ProbeRecord]], tmp_path: Path
) -> None:
    """SIGKILL a ``ladder probe`` mid-run, rerun it: every key once, and each record the
    same as the uninterrupted probe's (the scripted endpoint is deterministic)."""
    run, _, full = synthetic
    out = tmp_path / "probe"
    args = ladder_argv("probe", str(run), "--out", str(out), "--samples", "4")
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    path = out / PROBE_LOG
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= 200:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the probe finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = read_probe(out)
    assert 200 <= len(partial) < len(full)
    res = ladder("probe", str(run), "--out", str(out), "--samples", "4")
    assert res.returncode == 0, res.stderr
    resumed = read_probe(out)
    keys = [r.key() for r in resumed]
    assert len(keys) == len(set(keys)) == len(full)

    def strip(r: ProbeRecord) -> tuple[Any, ...]:
        return (r.key(), r.reply, r.reexecuted, r.said_done_then_booked, r.recorded_rebooked)

    assert sorted(map(strip, resumed)) == sorted(map(strip, full))
    # a resume with other sampling settings is refused in one line
    bad = ladder("probe", str(run), "--out", str(out), "--temperature", "1.0")
    assert bad.returncode == 2 and "temperature" in bad.stderr


def _run_harness(tmp: Path, model: str, seeds: str) -> Path:
    data = grid_data(seeds=seeds, steps=10, arms=[], timeout_s=30.0)
    data["run"]["variants"] = [{"arm": "raw", "harness": "langgraph"}]
    data["models"] = [{"name": model, "endpoint": "embedded"}]
    out = tmp / "run"
    summary, _ = asyncio.run(run_inprocess(parse_grid(data), out))
    assert summary["infrastructure"] == 0
    return out


def test_tool_harness_probe_with_tools_rows(tmp_path: Path) -> None:
    """The paper's "with tools" rows: the raw arm's harness episodes branched at their trap
    turns. The perfect agent calls the done step's tool again under no variant; the
    synthetic agent's greedy re-ask of the rebuilt request reproduces every recorded
    outcome (the rebuilt request is the one the harness sent, so the scripted endpoint
    answers it the same way)."""
    perfect_run = _run_harness(tmp_path / "perfect", PERFECT, "100-103")
    summary, recs = _probe(perfect_run, tmp_path / "perfect-probe", samples=1)
    traps = {(r.episode_id, r.turn) for r in recs}
    assert traps and summary.traps == len(traps)
    assert all(r.harness == "langgraph" for r in recs)
    assert not [r for r in recs if r.reexecuted]
    # prose / erased do not apply in the harness (docs/probe.md)
    assert summary.not_applicable == 2 * len(traps)
    assert {r.variant for r in recs} == set(VARIANTS) - {"prose", "erased"}

    synth_run = _run_harness(tmp_path / "synthetic", SYNTH, "100-111")
    _, srecs = _probe(synth_run, tmp_path / "synthetic-probe", samples=2)
    greedy = [r for r in srecs if r.variant == "as_recorded" and r.decoding == "greedy"]
    assert greedy and all(r.reexecuted == r.recorded_rebooked for r in greedy)
    assert any(r.recorded_rebooked for r in greedy)  # some trap turns called the tool again
    assert sum(r.reexecuted for r in srecs if r.variant == "directive_user") < sum(
        r.reexecuted for r in srecs if r.variant == "as_recorded"
    )
    text = ladder("probe", "--report", str(tmp_path / "synthetic-probe"))
    assert text.returncode == 0, text.stderr
    assert "with tools (LangGraph harness)" in text.stdout
