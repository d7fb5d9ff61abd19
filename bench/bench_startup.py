"""Start-up (#49 item 6, #50): the CPU a ``ladder`` process spends before it answers, over a
bare ``python -c pass`` measured in the same run.

Every command line runs as a fresh process of the installed ``ladder`` script (or
``python -m ladder`` where there is none), bytecode cached (each is run once first, with
``PYTHONDONTWRITEBYTECODE`` unset; for each command's ``-h``, an info row, the bytecode of
our packages is compiled in this process instead, #50), its output discarded. CPU is the
child's user + system time (``getrusage(RUSAGE_CHILDREN)``). The command lines are interleaved, one of each per
round, so a change in the machine's load falls on all of them alike; the figure is the median
over rounds of each one's CPU minus bare Python's in the same round (the minimum is in the
JSON). Targets: ``--version``, ``-h``, a typo'd command, an unknown root option, and a few
commands' own one-line errors (a missing run directory, ``--steps 99``, ``--trials 0``)
within 0.3 s of CPU over bare Python; each command's ``-h`` (which imports that command's
module and its dependencies) is shown as info.
"""

from __future__ import annotations

import compileall
import os
import py_compile
import resource
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench._common import row

__all__ = ["ERRORS", "ROOT", "run"]

TARGET_S = 0.3
PACKAGES = ("ladder", "protocol", "runner", "scoring", "serve", "tau2gate")  # ours (pyproject)
# the command lines with a target: they import no command's module
ROOT: tuple[tuple[str, ...], ...] = (("--version",), ("-h",), ("scor",), ("--bogus",))
# a command's own one-line errors: #49 asks the same 0.3 s of them; they import the command
_MISSING = "/nonexistent-ladder-bench"
ERRORS: tuple[tuple[str, ...], ...] = (
    ("score", _MISSING),
    ("report", _MISSING),
    ("show", _MISSING),
    ("cost", _MISSING),
    ("validate", f"{_MISSING}.toml"),
    ("generate", "--steps", "99"),
    ("run", "--trials", "0"),
)


def _ladder() -> list[str]:
    script = Path(sys.executable).with_name("ladder")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ladder"]


def _commands() -> list[tuple[str, ...]]:
    from ladder.app import COMMANDS  # light: the lazy table, no command's module

    return [(name, "-h") for name in COMMANDS]


def _cpu_s(argv: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of one run of ``argv`` (output discarded)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compiled() -> None:
    """Bytecode of every module of ours written here, as a first import writes it (timestamp
    checked), or found fresh at a ``stat`` a file: what a first run of each command's ``-h``
    did (11 s of the bench, #50). Other packages' bytecode was written when they were
    installed."""
    root = Path(__file__).resolve().parent.parent
    for package in PACKAGES:
        compileall.compile_dir(
            root / package, quiet=1, invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP
        )


def measure(
    lines: Sequence[tuple[str, ...]], rounds: int, *, warm: bool = True
) -> dict[str, list[float]]:
    """Per command line, its CPU over bare Python's in each of ``rounds`` interleaved rounds
    (``warm``: each line run once first; else :func:`compiled` stands for that run)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["COLUMNS"] = "80"
    bare = [sys.executable, "-c", "pass"]
    ladder = _ladder()
    if not warm:
        compiled()
    for args in lines if warm else ():  # bytecode written once, outside the rounds
        _cpu_s([*ladder, *args], env)
    over: dict[str, list[float]] = {" ".join(a): [] for a in lines}
    for _ in range(rounds):
        base = _cpu_s(bare, env)
        for args in lines:
            over[" ".join(args)].append(_cpu_s([*ladder, *args], env) - base)
    return over


def run(quick: bool = False) -> dict[str, Any]:
    # #50: 5 rounds, not 9: the root lines' CPU over bare Python spread 0.044-0.102 s over
    # 9 rounds on the quiet machine, 0.2 s under the 0.3 s target; each command's -h (info
    # rows, a ranking of the commands' imports from 0.25 s to 1.3 s) once, with no run first
    over = measure(ROOT, 5)
    if not quick:
        over |= measure(ERRORS, 2)
        over |= measure(_commands(), 1, warm=False)
    rows = []
    for args, xs in over.items():
        value = round(statistics.median(xs), 3)
        figure = f"ladder {args}: CPU s over bare Python"
        if tuple(args.split()) in ROOT + ERRORS:
            rows.append(row(figure, value, f"<= {TARGET_S}", value <= TARGET_S))
        else:
            rows.append(row(figure, value, "info", None))
    return {
        "case": "startup",
        "rows": rows,
        "over_bare_s": {a: [round(x, 4) for x in xs] for a, xs in over.items()},
        "min_over_bare_s": {a: round(min(xs), 4) for a, xs in over.items()},
    }


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv))
