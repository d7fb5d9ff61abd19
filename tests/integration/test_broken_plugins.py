"""A broken plugin fails alone (#47): entry points declared by a scratch ``.dist-info`` on
``PYTHONPATH`` whose module raises at import, is missing, or holds no arm. `ladder run`
with the built-in arms and `ladder score` go on (exit 0) with one warning line per broken
entry naming its distribution and the error; a run that names the broken arm is one error
line (exit 2); the module that raises is imported at most once per command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DIST = "hostile_plugin"

ENTRY_POINTS = """\
[state_ladder.arms]
boom = hostile_boom:SPEC
gone = hostile_no_such_module:SPEC
five = hostile_five:SPEC

[state_ladder.analyses]
boom_table = hostile_boom:TABLE
"""

BOOM = """\
import os
with open(os.environ["HOSTILE_COUNT"], "a") as f:
    f.write("imported\\n")
raise RuntimeError("boom at import")
"""


def _site(root: Path) -> Path:
    site = root / "site"
    info = site / f"{DIST}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {DIST}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    (site / "hostile_boom.py").write_text(BOOM)
    (site / "hostile_five.py").write_text("SPEC = 5\n")
    return site


def _ladder(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_BASE_URL"}
    env["PYTHONPATH"] = f"{_site(root) if not (root / 'site').exists() else root / 'site'}:{REPO}"
    env["HOSTILE_COUNT"] = str(root / "count.txt")
    return subprocess.run(
        [sys.executable, "-m", "ladder", *args], cwd=root, env=env, capture_output=True, text=True
    )


def test_a_broken_plugin_is_a_warning_and_the_command_goes_on(tmp_path: Path) -> None:
    run = tmp_path / "run"
    args = ["run", "--model", "scripted/perfect", "--arms", "raw", "--seeds", "100"]
    done = _ladder(tmp_path, *args, "--steps", "5", "--out", str(run), "--no-live")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    warnings = [x for x in done.stderr.splitlines() if x.startswith("warning:")]
    for name, why in (("boom", "RuntimeError: boom at import"), ("gone", "cannot import"),
                      ("five", "is not a valid arm")):  # fmt: skip
        (line,) = [w for w in warnings if f"arm '{name}'" in w]
        assert DIST in line and why in line, line
    assert (tmp_path / "count.txt").read_text().count("imported") <= 1
    (tmp_path / "count.txt").unlink()
    scored = _ladder(tmp_path, "score", str(run))
    assert scored.returncode == 0 and "Traceback" not in scored.stderr, scored.stderr[-2000:]
    assert not (tmp_path / "count.txt").exists() or (
        (tmp_path / "count.txt").read_text().count("imported") == 1
    )


def test_a_run_naming_a_broken_arm_is_one_error_line(tmp_path: Path) -> None:
    args = ["run", "--model", "scripted/perfect", "--arms", "raw,boom", "--seeds", "100"]
    done = _ladder(tmp_path, *args, "--steps", "5", "--out", str(tmp_path / "run"), "--no-live")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    errors = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and "boom" in errors[0] and "boom at import" in errors[0], done.stderr
