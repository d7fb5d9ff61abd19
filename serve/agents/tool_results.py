"""The tool harness's results as an agent reads them (``runner.harness``, docs/tools.md).

After a reply whose ``ACTION`` lines the harness dispatched, the next user-role message
holds only tool results (``[TOOL RESULT] ...``) and refusals (``[CALL REJECTED] ...``). Every
scripted policy answers such a message with a short acknowledgement and no ``ACTION``: the
work of the request was decided in the reply that made the calls.
"""

from __future__ import annotations

from protocol import strings
from serve.agents.answer import Answer

__all__ = ["RESULT_OPENINGS", "acknowledge", "is_tool_results"]

RESULT_OPENINGS = (strings.TOOL_RESULT.split("{")[0], strings.TOOL_REJECTION.split("{")[0])


def is_tool_results(content: str) -> bool:
    """Whether a user message consists of tool results and refusals only."""
    parts = [p for p in content.split("\n\n") if p.strip()]
    return bool(parts) and all(p.startswith(RESULT_OPENINGS) for p in parts)


def acknowledge(content: str) -> Answer:
    rejected = RESULT_OPENINGS[1] in content
    if rejected:
        text = "The system rejected that call, so the work was not executed; I will not retry it."
    else:
        text = "The system executed the call and returned its receipt; that work is done."
    return Answer(content=text, reasoning="Tool results received; nothing further to execute.")
