"""Contrast tables name a knob cell by its configuration's number (``#1 raw -> #3 raw``)
within 80 columns, the long form under ``--wide`` (#49, item 4)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app

GRID = Path(__file__).resolve().parents[2] / "runner" / "grids" / "user-style.toml"


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("knobs") / "run"
    args = ["run", str(GRID), "--seeds", "100-101", "--arms", "raw", "--steps", "5"]
    args += ["--base-url", "embedded", "--served", "scripted/synthetic", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--no-live"])
    assert result.exit_code == 0, result.output
    asyncio.set_event_loop_policy(None)
    return out


def test_knob_contrasts_by_number_at_80_columns(run: Path) -> None:
    result = CliRunner().invoke(app, ["score", str(run)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert all(len(x) <= 80 for x in lines), [x for x in lines if len(x) > 80]
    legend = result.stdout.split("Configurations:\n", 1)[1].split("\n\n", 1)[0]
    numbered = {x.split()[0]: x for x in legend.replace("\n      ", " ").splitlines()}
    rows = [x for x in lines if " -> " in x and x.startswith("#")]
    assert len(rows) >= 4
    for row in rows:
        cfg, a_cfg, a_arm, arrow, b_cfg, b_arm = row.split()[:6]
        assert (a_cfg, a_arm, arrow, b_arm) == ("#1", "raw", "->", "raw") and b_cfg == cfg
        assert "user_style" in numbered[cfg] and "user_style" not in numbered["#1"]
    wide = CliRunner().invoke(app, ["score", str(run), "--wide"]).stdout
    assert "raw -> raw[user_style=contradict,user_dose=0.1]" in wide
