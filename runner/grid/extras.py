"""Whether an arm's optional extra is installed: the grid check's, before a run.

An arm's row names the extra its session imports (``ArmSpec.needs``) and that extra's
libraries (``ArmSpec.imports``); a grid naming the arm without them is one line naming the
extra. Only :func:`importlib.util.find_spec`: nothing heavy is imported.
"""

from __future__ import annotations

import importlib.util

from protocol.arms.table import arm_spec

__all__ = ["missing"]


def missing(arm: str) -> str | None:
    """One line naming the extra (``ArmSpec.needs``) when ``arm`` imports a library of it
    (``ArmSpec.imports``) that is not installed."""
    spec = arm_spec(arm)
    if spec is None or spec.needs is None:
        return None
    absent = [m for m in spec.imports if importlib.util.find_spec(m) is None]
    if not absent:
        return None
    hint = f"pip install -e '.[{spec.needs}]'"
    return f"arm {arm!r} needs {', '.join(absent)}: install the {spec.needs} extra ({hint})"
