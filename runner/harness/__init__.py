"""The real-tool harness (Section 5.4, Appendix G), on LangGraph.

Cells with ``knobs.harness == "langgraph"`` run here (docs/tools.md): the brief carries the
tool clause instead of the ref protocol, every step is a tool, a booking is a tool call
carrying the current work order, and each executed call stamps the episode's workspace.
Needs the ``tools`` extra (``pip install 'state-ladder[tools]'``).
"""

from __future__ import annotations

from runner.harness.tool_episode import run_harness_episode

__all__ = [
    "run_harness_episode",
]
