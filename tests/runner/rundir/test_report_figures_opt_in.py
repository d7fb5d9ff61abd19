"""``ladder report``'s figures are drawn on request only (#50): without ``figures`` no PNG is
written or linked, matplotlib is never imported (in the report's process or its scoring
workers) and report.md says how to draw them; with it the PNGs are
:func:`runner.rundir.plots.draw_pngs`' bytes, as before. The paper figures' points are
written either way, the same bytes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from runner.rundir.logs import LogReport
from runner.rundir.plots import draw_pngs
from runner.rundir.report import write_report
from runner.rundir.rescore import scored_dir
from tests.runner.rundir.test_report_parallel import run_dir  # the run of 8 log files

__all__ = ["run_dir"]

ROOT = Path(__file__).resolve().parents[3]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_the_default_draws_no_figure_and_says_how(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "plain" / "report.md"
    assert write_report(run_dir, out, jobs=1) == out
    assert set(_files(out.parent)) == {"report.md", "report-analyses.json", "report-figures.json"}
    text = out.read_text()
    assert ".png" not in text.replace("report-*.png", "") and "## Figures" not in text
    notes = [line for line in text.splitlines() if "Figures not drawn" in line]
    assert len(notes) == 1
    assert "the same `ladder report` command with `--figures`" in notes[0]
    assert str(run_dir) not in text and str(tmp_path) not in text  # no local path
    assert "earlier run" in notes[0]
    assert "matplotlib" not in text and "[plots]" not in text  # no extra is missing


def test_figures_draw_the_same_bytes_and_the_same_points(run_dir: Path, tmp_path: Path) -> None:
    drawn = write_report(run_dir, tmp_path / "drawn" / "report.md", jobs=1, figures=True)
    plain = write_report(run_dir, tmp_path / "plain" / "report.md", jobs=1)
    files = _files(drawn.parent)
    scored, _ = scored_dir(run_dir, LogReport(), jobs=1)
    pngs = draw_pngs(scored.lines, scored.analyses, jobs=1)
    assert {"figure4", "figure5a", "figure5b", "channels"} <= set(pngs)
    text = drawn.read_text()
    for name, (caption, png, _) in pngs.items():
        assert files[f"report-{name}.png"] == png, name
        assert f"![{caption}](report-{name}.png)" in text
    assert "Figures not drawn" not in text
    assert len([n for n in files if n.endswith(".png")]) == len(pngs)
    # the points the drawing returns are the points computed without it, byte for byte
    figures = json.loads(files["report-figures.json"])
    assert {"figure4", "figure5a", "figure5b"} <= set(figures)
    for name in ("report-figures.json", "report-analyses.json"):
        assert (plain.parent / name).read_bytes() == files[name], name
    # report.md is the drawn one less the figures and plus the note
    drawn_lines = [x for x in text.splitlines() if ".png)" not in x and x != "## Figures"]
    plain_lines = [x for x in plain.read_text().splitlines() if "Figures not drawn" not in x]
    assert [x for x in drawn_lines if x] == [x for x in plain_lines if x]


def test_an_earlier_runs_figures_stay_unlinked(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    write_report(run_dir, out, jobs=1, figures=True)
    before = _files(tmp_path)
    assert any(name.endswith(".png") for name in before) and ".png)" in out.read_text()
    write_report(run_dir, out, jobs=1)
    after = _files(tmp_path)
    assert set(after) == set(before)  # nothing deleted
    assert all(after[n] == b for n, b in before.items() if n.endswith(".png"))
    text = out.read_text()
    assert ".png)" not in text and "## Figures" not in text
    assert "Any `report-*.png` beside this report is from an earlier run" in text


# Runs write_report in a fresh process on the workers' path (every log scored in worker
# processes, min_bytes 0) and says whether matplotlib was imported in it and in each worker.
_PROBE = """
import json, os, sys
from functools import partial
from pathlib import Path
import runner.rundir.rescore as rescore
from runner.rundir import report

run, out, figures = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "1"
scored = rescore.score_group


def score_group(*a, **k):
    seen = f"{os.getpid()} {'matplotlib' in sys.modules}"
    with open(out.parent / "workers.txt", "a") as f:
        f.write(seen + "\\n")
    return scored(*a, **k)


rescore.score_group = score_group
report.scored_dir = partial(rescore.scored_dir, min_bytes=0)
before = "matplotlib" in sys.modules
report.write_report(run, out, jobs=2, figures=figures)
print(json.dumps([os.getpid(), before, "matplotlib" in sys.modules]))
"""


@pytest.mark.parametrize("figures", [False, True])
def test_no_matplotlib_without_figures(run_dir: Path, tmp_path: Path, figures: bool) -> None:
    out = tmp_path / "report.md"
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(run_dir), str(out), "1" if figures else "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    pid, before, after = json.loads(proc.stdout.strip().splitlines()[-1])
    assert before is False
    assert after is figures  # the check sees matplotlib where the report drew
    workers = [line.split() for line in (tmp_path / "workers.txt").read_text().splitlines()]
    assert len(workers) > 1 and all(int(p) != pid for p, _ in workers)  # the workers' path
    assert all(seen == "False" for _, seen in workers)
    assert bool(list(tmp_path.glob("*.png"))) is figures
