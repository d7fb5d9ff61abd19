"""Memory stores for the memory arms (Appendix F): embedders, the top-k exchange index, Mem0.

Imported only when a memory arm runs; the heavy libraries (faiss-cpu, mem0ai, numpy) come
with the ``memory`` extra. :func:`missing` names what is not installed, in one line.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile

from protocol.arms import MEMORY_ARMS

# Before any mem0 import: no telemetry client at all, and mem0's directory (it makes one at
# import) a temporary one rather than ~/.mem0.
os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", os.path.join(tempfile.gettempdir(), "state-ladder-mem0"))

__all__ = ["EXTRA_HINT", "MEMORY_ARMS", "missing"]

EXTRA_HINT = "pip install -e '.[memory]'"
_NEEDS = {"memory-topk": ("faiss", "numpy"), "mem0": ("faiss", "numpy", "mem0")}


def missing(arm: str) -> str | None:
    """One line naming the extra when ``arm`` needs a library that is not installed."""
    absent = [m for m in _NEEDS.get(arm, ()) if importlib.util.find_spec(m) is None]
    if not absent:
        return None
    return f"arm {arm!r} needs {', '.join(absent)}: install the memory extra ({EXTRA_HINT})"
