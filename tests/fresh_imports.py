"""What a piece of code imports, run in a fresh interpreter (a command's start-up, a p-value
or an interval that must not bring in scipy): :func:`imported_after`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

__all__ = ["imported_after", "of_packages"]

ROOT = Path(__file__).resolve().parents[1]


def imported_after(code: str) -> list[str]:
    """Module names in ``sys.modules`` after running ``code`` in a fresh interpreter (from the
    repository's root); an exception in ``code``, an ``assert`` included, fails the call."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=ROOT,
    ).stdout
    return list(json.loads(out.splitlines()[-1]))


def of_packages(modules: list[str], *packages: str) -> list[str]:
    """The ``modules`` of these top-level ``packages``."""
    return [m for m in modules if m.split(".")[0] in packages]
