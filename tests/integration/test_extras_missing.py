"""A plain ``pip install -e .`` never ends in a traceback (issue 28, item 2).

Each optional extra (plots, memory, tools, query) is taken away in a subprocess by blocking
its imports (``sys.modules[name] = None``: ``import name`` then raises ImportError as on an
install without it), and every command is run there in-process: each ends with exit 0, or
exit 2 and one line naming the extra; none raises. This stands in for a fresh venv per extra
(the machine running the suite may have no network for building one).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.reliability_kit import REPO

EXTRAS = {
    "plots": ("matplotlib",),
    "memory": ("faiss", "mem0"),
    "tools": ("langgraph",),
    "query": ("duckdb", "pandas"),
}

# Runs each argv of a JSON list in-process with the given modules blocked; writes, per
# command, its exit code, its output and the exception that escaped (if any).
DRIVER = """
import contextlib, io, json, sys, traceback
blocked, commands, result = sys.argv[1].split(","), json.loads(sys.argv[2]), sys.argv[3]
for name in blocked:
    sys.modules[name] = None
from ladder.app import app
rows = []
for argv in commands:
    out, err = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8") for _ in "oe")
    escaped, code = None, 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            app(argv, prog_name="ladder")
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:
            escaped = traceback.format_exc()
    text = []
    for f in (out, err):
        f.flush()
        text.append(f.buffer.getvalue().decode())
    rows.append({"argv": argv, "code": code, "out": text[0], "err": text[1], "escaped": escaped})
open(result, "w").write(json.dumps(rows))
"""


def _drive(blocked: tuple[str, ...], commands: list[list[str]], tmp: Path) -> list[Any]:
    result = tmp / f"result-{'-'.join(blocked)}.json"
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "120"}
    env.pop("OPENAI_BASE_URL", None)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, ",".join(blocked), json.dumps(commands), str(result)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    rows: list[Any] = json.loads(result.read_text())
    return rows


def _commands(run_dir: Path, tmp: Path) -> list[list[str]]:
    grids = REPO / "runner" / "grids"
    return [
        ["generate", "--seed", "1"],
        ["run", "--seeds", "100", "--arms", "raw", "--out", str(tmp / "run"), "--no-live"],
        ["run", "--seeds", "100", "--arms", "memory-topk", "--out", str(tmp / "m"), "--no-live"],
        ["validate", str(grids / "memory.toml"), "--offline"],
        ["validate", str(grids / "tools.toml"), "--offline"],
        ["cost", str(run_dir)],
        ["score", str(run_dir)],
        ["report", str(run_dir), "--out", str(tmp / "report" / "report.md"), "--figures"],
        ["show", str(run_dir), "--arm", "raw", "--seed", "100"],
        ["probe", str(run_dir), "--out", str(tmp / "probe"), "--limit", "1"],
        ["report", str(run_dir), "--out", str(tmp / "plain" / "report.md")],  # no figures
    ]


def _check(rows: list[Any], extra: str) -> None:
    for row in rows:
        assert row["escaped"] is None, (row["argv"], row["escaped"])
        assert row["code"] in (0, 2), row
        if row["code"] == 2:  # refused: one line, naming the extra the command needs
            err = row["err"].strip().splitlines()
            assert len(err) == 1 and f"[{extra}]" in err[0], row


@pytest.fixture(scope="module")
def demo_without_plots(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    """``ladder demo`` and every other command with matplotlib missing."""
    tmp = tmp_path_factory.mktemp("plots")
    demo = tmp / "demo"
    commands = [["demo", "--out", str(demo), "--no-live"], *_commands(demo, tmp)]
    return demo, _drive(EXTRAS["plots"], commands, tmp)


def test_the_demo_writes_its_report_without_the_plots_extra(
    demo_without_plots: tuple[Path, list[Any]],
) -> None:
    demo, rows = demo_without_plots
    first = rows[0]
    assert first["argv"][0] == "demo" and first["code"] == 0 and first["escaped"] is None
    text = (demo / "report.md").read_text()
    assert "## " in text and "No figures: the figures need matplotlib" in text
    assert not list(demo.glob("*.png")) and ".png" not in text
    said = [x for x in first["out"].splitlines() if "pip install 'state-ladder[plots]'" in x]
    assert len(said) == 1, first["out"]
    report, plain = (r for r in rows if r["argv"][0] == "report")
    assert report["code"] == 0 and "[plots]" in report["out"]
    assert not (Path(report["argv"][3]).parent / "report-success.png").exists()
    # without --figures nothing is missing: no word of the extra, the note on --figures
    assert plain["code"] == 0 and "plots" not in plain["err"] and "[plots]" not in plain["out"]
    text = Path(plain["argv"][3]).read_text()
    assert "Figures not drawn" in text and "matplotlib" not in text


# The commands (by position in _commands) each extra's absence refuses; the rest run.
REFUSED = {"plots": set(), "memory": {2, 3}, "tools": {4}, "query": set()}


def test_every_command_without_the_plots_extra(demo_without_plots: tuple[Path, list[Any]]) -> None:
    rows = demo_without_plots[1][1:]
    _check(rows, "plots")
    assert {i for i, r in enumerate(rows) if r["code"] == 2} == REFUSED["plots"]


@pytest.mark.parametrize("extra", ["memory", "tools", "query"])
def test_every_command_without_an_extra(extra: str, tmp_path: Path) -> None:
    # the run the second command makes is the one the later commands read
    rows = _drive(EXTRAS[extra], _commands(tmp_path / "run", tmp_path), tmp_path)
    _check(rows, extra)
    assert {i for i, r in enumerate(rows) if r["code"] == 2} == REFUSED[extra]
