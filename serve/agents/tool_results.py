"""The tool harness's results as an agent reads them (``runner.harness``, docs/tools.md).

After a reply whose ``ACTION`` lines the harness dispatched, the next user-role message
holds only tool results (``[TOOL RESULT] ...``), refusals (``[CALL REJECTED] ...``) and, with
the tool_failure knob, failures (``[TOOL ERROR] ...``). Every scripted policy answers such a
message with a short acknowledgement and no ``ACTION``: the work of the request was decided
in the reply that made the calls; a failed call is retried once per failure result, with the
same tool and work order (the tool executed nothing, so the retry is no re-execution).
"""

from __future__ import annotations

import json

from protocol import strings
from serve.agents.answer import Answer
from serve.agents.patterns import WORK_ORDER, template_regex

__all__ = ["RESULT_OPENINGS", "acknowledge", "is_tool_results"]

RESULT_OPENINGS = (
    strings.TOOL_RESULT.split("{")[0],
    strings.TOOL_REJECTION.split("{")[0],
    strings.TOOL_FAILED.split("{")[0],
)
_FAILED = template_regex(
    strings.TOOL_FAILED, tool=r"[A-Za-z0-9_\-]+", work_order=WORK_ORDER, reason=r"[^;]+"
)


def is_tool_results(content: str) -> bool:
    """Whether a user message consists of tool results and refusals only."""
    parts = [p for p in content.split("\n\n") if p.strip()]
    return bool(parts) and all(p.startswith(RESULT_OPENINGS) for p in parts)


def acknowledge(content: str) -> Answer:
    failed = [(m["tool"], m["work_order"]) for m in _FAILED.finditer(content)]
    if failed:
        retry = [
            "ACTION " + json.dumps({"tool": tool, "work_order": wo})
            for tool, wo in dict.fromkeys(failed)
        ]
        text = "\n".join(["The tool failed and executed nothing; retrying the same call.", *retry])
        return Answer(content=text, reasoning="A tool call failed; retry it.")
    rejected = RESULT_OPENINGS[1] in content
    if rejected:
        text = "The system rejected that call, so the work was not executed; I will not retry it."
    else:
        text = "The system executed the call and returned its receipt; that work is done."
    return Answer(content=text, reasoning="Tool results received; nothing further to execute.")
