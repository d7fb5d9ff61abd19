"""A ``ladder`` process skips the interpreter's shutdown sweeps (#50, eighth round): its
tracked objects are frozen when it exits (:func:`ladder.app._exit_unswept`), registered once
however many commands a process runs. The wall it saves is measured in bench/README.md, never
here."""

from __future__ import annotations

import atexit
import gc
import subprocess
import sys
from collections.abc import Callable

import pytest
from typer.testing import CliRunner

import ladder.app as app_module
from ladder.app import app


def test_registered_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    registered: list[Callable[[], object]] = []
    monkeypatch.setattr(app_module, "_SWEPT", [])
    monkeypatch.setattr(atexit, "register", registered.append)
    for _ in range(2):
        assert CliRunner().invoke(app, ["score", "--help"]).exit_code == 0
    assert registered.count(gc.freeze) == 1  # (a module the command imports may add its own)


def test_a_command_process_exits_frozen() -> None:
    # registered before main's: it runs after main's freeze (atexit is last in, first out)
    code = (
        "import atexit, gc; from ladder.app import main; "
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0)); main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "score", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "frozen True"
