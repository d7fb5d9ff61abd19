"""Memory stores for the memory arms (Appendix F): embedders, the top-k exchange index, Mem0.

Imported only when a memory arm runs; the heavy libraries (faiss-cpu, mem0ai, numpy) come
with the ``memory`` extra. :func:`missing` names what is not installed, in one line.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile

from protocol.arms.table import arm_spec

# Before any mem0 import: no telemetry client at all, and mem0's directory (it makes one at
# import) a temporary one rather than ~/.mem0.
os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", os.path.join(tempfile.gettempdir(), "state-ladder-mem0"))

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
