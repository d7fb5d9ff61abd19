"""``just tau2-check`` picks the first interpreter that runs and is Python >= 3.12, and says
which in one line (issue 28, item 11): a pyenv shim for an inactive version is skipped."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.reliability_kit import REPO

SCRIPT = REPO / "scripts" / "tau2-python.sh"
SHIM = '#!/bin/sh\necho "pyenv: $(basename "$0"): command not found" >&2\nexit 127\n'


def _fake(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text(body)
    path.chmod(0o755)


def _version(v: str) -> str:
    """A stand-in interpreter answering the script's check as Python ``v`` would."""
    ok = tuple(map(int, v.split("."))) >= (3, 12)
    return f"#!/bin/sh\necho {v}\nexit {0 if ok else 1}\n"


def _pick(bin_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    bash = shutil.which("bash")
    assert bash is not None
    full = {"PATH": str(bin_dir), "HOME": os.environ.get("HOME", "/"), **env}
    return subprocess.run([bash, str(SCRIPT)], capture_output=True, text=True, env=full, timeout=30)


def test_a_shim_that_does_not_run_is_skipped(tmp_path: Path) -> None:
    _fake(tmp_path, "python3.13", SHIM)
    _fake(tmp_path, "python3.12", _version("3.12.9"))
    _fake(tmp_path, "python3", _version("3.11.7"))
    result = _pick(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(tmp_path / "python3.12")
    assert result.stderr.strip().splitlines() == [
        f"tau2-check: using {tmp_path / 'python3.12'} (Python 3.12.9)"
    ]


def test_no_interpreter_qualifies_one_line_exit_2(tmp_path: Path) -> None:
    _fake(tmp_path, "python3.13", SHIM)
    _fake(tmp_path, "python3", _version("3.11.7"))
    result = _pick(tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert "python3.13: does not run" in line and "python3.12: not found" in line
    assert "python3: Python 3.11.7" in line and "TAU2_PYTHON" in line


def test_tau2_python_is_checked_too(tmp_path: Path) -> None:
    _fake(tmp_path, "python3.12", _version("3.12.9"))
    _fake(tmp_path, "old", _version("3.11.2"))
    result = _pick(tmp_path, TAU2_PYTHON=str(tmp_path / "old"))
    assert result.returncode == 2 and "Python 3.11.2" in result.stderr
    result = _pick(tmp_path, TAU2_PYTHON=str(tmp_path / "python3.12"))
    assert result.returncode == 0 and result.stdout.strip() == str(tmp_path / "python3.12")
