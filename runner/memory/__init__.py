"""Memory stores for the memory arms (Appendix F): embedders, the top-k exchange index, Mem0.

Imported only when a memory arm runs; the heavy libraries (faiss-cpu, mem0ai, numpy) come
with the ``memory`` extra. :func:`runner.grid.extras.missing` names what is not installed,
in one line (the grid check's: this package imports the grid, never the other way).
"""

from __future__ import annotations

import os
import tempfile

# Before any mem0 import: no telemetry client at all, and mem0's directory (it makes one at
# import) a temporary one rather than ~/.mem0.
os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", os.path.join(tempfile.gettempdir(), "state-ladder-mem0"))

__all__: list[str] = []
