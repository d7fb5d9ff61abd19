"""``ladder score`` and ``ladder report`` on temporary log directories."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol import EpisodeRecord
from runner.rundir.logs import LogWriter
from tests.scoring_records import Act, build, cell, episode, perfect, ref_line

runner = CliRunner()


def _records() -> list[EpisodeRecord]:
    out = []
    for seed in range(4):
        ep = episode(seed=seed, steps=5)
        probe = next(t for t in ep.turns if t.kind == "redo_probe")
        assert probe.step is not None
        wrong = {probe.index: Act(ref_line(ep, probe.step, probe.work_order))}
        out.append(build(ep, cell("raw", ep.spec), perfect(ep, wrong if seed < 3 else {})))
        out.append(build(ep, cell("checklist", ep.spec), perfect(ep)))
    return out


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    with LogWriter(tmp_path) as w:
        for r in _records():
            w.write(r)
    files = sorted((tmp_path / "logs").glob("*.jsonl"))
    assert len(files) == 2
    lines = files[0].read_bytes().splitlines(keepends=True)
    files[0].write_bytes(b"".join([lines[0], b"{this is not json}\n", *lines[1:]]))
    with files[1].open("ab") as f:
        f.write(b'{"type":"episode","schema_version":1,"cell":{"mod')  # killed mid-write
    return tmp_path


def test_score_prints_tables_and_reports_bad_lines(logdir: Path) -> None:
    result = runner.invoke(app, ["score", str(logdir)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Strict success, primary scoring" in out
    assert "Strict success, decline-aware scoring" in out
    assert "raw -> checklist" in out
    assert "Table 15 ladder | scripted/golden no-think: 1 contrast" in out
    assert "Error channels" in out
    assert "1/4" in out and "4/4" in out  # raw: 1 of 4 strict successes; checklist: 4 of 4
    assert "8 records in 2 files; 1 corrupt, 1 truncated" in out
    assert "corrupt: " in out and "truncated: " in out


def test_score_json_lines(logdir: Path) -> None:
    result = runner.invoke(app, ["score", str(logdir), "--json"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in result.stdout.splitlines()]
    cells = [x for x in lines if x["type"] == "cell"]
    contrasts = [x for x in lines if x["type"] == "contrast"]
    assert [c["cell"]["arm"] for c in cells] == ["raw", "checklist"]
    for key in (
        "n",
        "strict_successes",
        "strict",
        "strict_ci",
        "decline_aware_successes",
        "decline_aware",
        "decline_aware_ci",
        "infrastructure_errors",
        "channels",
        "channel_rates",
        "refused",
        "false_completions",
        "turn_accuracy",
    ):
        assert key in cells[0]
    assert cells[0]["channels"]["re_execution"] == 3
    assert {c["scoring"] for c in contrasts} == {"strict", "decline_aware"}
    c = contrasts[0]
    assert (c["a"], c["b"], c["n"], c["b_only"], c["a_only"]) == ("raw", "checklist", 4, 3, 0)
    assert c["p"] == pytest.approx(0.25) and c["p_holm"] == pytest.approx(0.25)
    assert "1 corrupt, 1 truncated" in result.stderr


def test_newer_schema_exits_2_with_one_line(tmp_path: Path) -> None:
    record = msgspec.structs.replace(_records()[0], schema_version=99)
    with LogWriter(tmp_path) as w:
        w.write(record)
    result = runner.invoke(app, ["score", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert "newer" in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize("name", ["missing", "empty"])
def test_unreadable_or_empty_directory_exits_2(tmp_path: Path, name: str) -> None:
    target = tmp_path / name
    if name == "empty":
        target.mkdir()
    result = runner.invoke(app, ["score", str(target)])
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "error:" in result.stderr


def test_report_writes_markdown_and_plots(logdir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "ladder.md"
    result = runner.invoke(app, ["report", str(logdir), "--out", str(out), "--figures"])
    assert result.exit_code == 0, result.output
    assert "with its plots" in result.output
    text = out.read_text()
    assert text.startswith("# state-ladder report")
    assert "## Error channels (Table 9 shape)" in text and "| raw -> checklist |" in text
    for name in ("ladder-success.png", "ladder-success-decline-aware.png", "ladder-channels.png"):
        png = out.parent / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({name})" in text
    default = runner.invoke(app, ["report", str(logdir)])
    assert default.exit_code == 0 and (logdir / "report.md").exists()


def test_report_draws_no_plots_without_figures(logdir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "ladder.md"
    result = runner.invoke(app, ["report", str(logdir), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "(no plots: --figures draws them)" in result.output
    assert not list(out.parent.glob("*.png")) and ".png)" not in out.read_text()
    note = [x for x in out.read_text().splitlines() if "Figures not drawn" in x]
    assert len(note) == 1 and "with `--figures`" in note[0]
    assert str(logdir) not in note[0] and str(tmp_path) not in note[0]  # no local path
    assert (out.parent / "ladder-figures.json").is_file()
    filtered = runner.invoke(app, ["report", str(logdir), "--out", str(out), "--arm", "raw"])
    assert filtered.exit_code == 0, filtered.output
    assert note[0] in out.read_text().splitlines()  # one note, whatever the filters


def test_report_help_explains_figures() -> None:
    result = runner.invoke(app, ["report", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "--figures" in text and "~0.5-0.7 s" in text and "state-ladder[plots]" in text
