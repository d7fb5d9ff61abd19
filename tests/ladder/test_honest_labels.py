"""Honest labels (#40, item 1): a cell whose agent a scripted model serves under a real
model's name says so in every label, table, legend, viewer header and JSON line, and the
report, the viewer and the run's first lines carry the SYNTHETIC warning."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol.config import CellKey, config_label, is_synthetic, model_label, scripted_served_by
from runner.viewer.data import RunView

SPOOF = Path(__file__).resolve().parents[2] / "runner" / "grids" / "spoof.toml"
HONEST = "qwen3-235b <- scripted/synthetic"


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("honest") / "run"
    args = ["run", str(SPOOF), "--seeds", "100-101", "--arms", "raw,checklist"]
    args += ["--served", "scripted/synthetic?seed=3", "--base-url", "embedded"]
    args += ["--out", str(out), "--no-live"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    asyncio.set_event_loop_policy(None)
    return out, result.output


def test_the_label_names_the_scripted_model() -> None:
    key = CellKey(model="qwen3-235b", steps=10, density=0.15, arm="raw")
    assert model_label(key) == "qwen3-235b" and not is_synthetic(key)
    served = scripted_served_by("qwen3-235b", "scripted/synthetic?obey=0.9")
    assert served == "scripted/synthetic?obey=0.9"
    honest = CellKey(model="qwen3-235b", steps=10, density=0.15, arm="raw", served_by=served)
    assert model_label(honest) == HONEST and is_synthetic(honest)
    assert config_label(honest).startswith(HONEST + " no-think S=10")
    assert honest.slug() == key.slug()  # log file names are unchanged
    # a real served name (or the scripted model under its own name) adds nothing
    assert scripted_served_by("qwen3-235b", "Qwen/Qwen3-235B") == ""
    assert scripted_served_by("scripted/perfect", "scripted/perfect") == ""


def test_live_lines_score_report_and_json_say_so(run_dir: tuple[Path, str]) -> None:
    out, output = run_dir
    assert "SYNTHETIC:" in output
    # the streamed lines name configurations by number; the legend spells them out
    legend = output.split("Configurations:\n", 1)[1]
    assert legend.startswith(f"  #1   {HONEST} no-think")
    score = CliRunner().invoke(app, ["score", str(out)])
    assert score.exit_code == 0, score.output
    rows = [x for x in score.output.splitlines() if "procurement" in x]
    assert rows and all(HONEST in x for x in rows)
    for raw in (out / "results.jsonl").read_bytes().splitlines():
        line = orjson.loads(raw)
        key = line.get("cell") or line.get("config")
        assert key["served_by"] == "scripted/synthetic?seed=3", line
    records = [
        orjson.loads(x) for f in (out / "logs").iterdir() for x in f.read_bytes().splitlines()
    ]
    assert records and all(r["synthetic"] and r["cell"]["served_by"] for r in records)
    report = CliRunner().invoke(app, ["report", str(out)])
    assert report.exit_code == 0, report.output
    text = (out / "report.md").read_text()
    assert f"> SYNTHETIC: cells of `{HONEST}`" in text
    # the configurations list spells the honest label; the tables number it (#k)
    # (its "<" escaped for Markdown outside code: #47)
    assert "qwen3-235b no-think" not in text
    assert f". {HONEST.replace('<', '&lt;')} no-think" in text


def test_the_figure_legend_and_the_viewer_say_so(run_dir: tuple[Path, str]) -> None:
    out, _ = run_dir
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    view = RunView(out).cells()
    assert view.synthetic.startswith("SYNTHETIC: cells of `" + HONEST)
    assert view.cells and all(c.config.startswith(HONEST) for c in view.cells)
    assert view.contrasts and all(c.config.startswith(HONEST) for c in view.contrasts)
    figure1 = orjson.loads((out / "report-figures.json").read_bytes())["figure1"]
    assert figure1["points"] and all(
        p["series"] == f"{HONEST} (no-think)" for p in figure1["points"]
    )
