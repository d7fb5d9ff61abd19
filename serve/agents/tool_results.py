"""The tool harness's results as an agent reads them (``runner.harness``, docs/tools.md).

After a reply whose ``ACTION`` lines the harness dispatched, the next user-role message
holds only tool results (``[TOOL RESULT] ...``), refusals (``[CALL REJECTED] ...``) and, with
the tool_failure knob, failures (``[TOOL ERROR] ...``). Every scripted policy answers such a
message with a short acknowledgement and no ``ACTION``: the work of the request was decided
in the reply that made the calls; a failed call is retried once per failure result, with the
same tool and work order (the tool executed nothing, so the retry is no re-execution).

At-most-once (the tool_failure_landed knob, issue #37): a timeout whose outcome is unknown
(``strings.TOOL_TIMEOUT_UNKNOWN``) may have written. The *careful* policy (the perfect agent)
asks the read-only status tool (``strings.STATUS_TOOL``) for the work order first, and on
its result retries only the timed-out tools whose write the workspace does not hold; every
other policy retries it blindly, like any failure (behind a gate that cannot refuse, a
retry of a landed write is a duplicate write).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from protocol import strings
from serve.agents.answer import Answer
from serve.agents.patterns import WORK_ORDER, template_regex

__all__ = ["RESULT_OPENINGS", "acknowledge", "is_tool_results"]

RESULT_OPENINGS = (
    strings.TOOL_RESULT.split("{")[0],
    strings.TOOL_REJECTION.split("{")[0],
    strings.TOOL_FAILED.split("{")[0],
)
_TOOL = r"[A-Za-z0-9_\-]+"
_FAILED = template_regex(strings.TOOL_FAILED, tool=_TOOL, work_order=WORK_ORDER, reason=r"[^;]+")
_UNKNOWN = template_regex(strings.TOOL_TIMEOUT_UNKNOWN, tool=_TOOL, work_order=WORK_ORDER)
_HOLDS = template_regex(strings.STATUS_HOLDS, work_order=WORK_ORDER, tools=r"[A-Za-z0-9_\-, ]+")
_NONE = template_regex(strings.STATUS_NONE, work_order=WORK_ORDER)

Call = tuple[str, str]  # (tool, work order)


def is_tool_results(content: str) -> bool:
    """Whether a user message consists of tool results and refusals only."""
    parts = [p for p in content.split("\n\n") if p.strip()]
    return bool(parts) and all(p.startswith(RESULT_OPENINGS) for p in parts)


def _action(tool: str, work_order: str) -> str:
    return "ACTION " + json.dumps({"tool": tool, "work_order": work_order})


def _status(content: str) -> dict[str, set[str]]:
    """Work order -> the tools whose write the status tool reported, for each status result."""
    found: dict[str, set[str]] = {m["work_order"]: set() for m in _NONE.finditer(content)}
    for m in _HOLDS.finditer(content):
        found[m["work_order"]] = {t.strip() for t in m["tools"].split(",")}
    return found


def _timed_out(earlier: Sequence[tuple[str, str]], work_order: str) -> list[str]:
    """The tools whose call for ``work_order`` last timed out with an unknown outcome: read
    from the latest earlier user message that reports such a timeout for it."""
    for role, content in reversed(earlier):
        if role != "user":
            continue
        tools = [m["tool"] for m in _UNKNOWN.finditer(content) if m["work_order"] == work_order]
        if tools:
            return list(dict.fromkeys(tools))
    return []


def acknowledge(
    content: str, earlier: Sequence[tuple[str, str]] = (), *, careful: bool = False
) -> Answer:
    """The answer to a message of tool results ``content``; ``earlier``: the messages
    before it (the careful policy reads which calls its status questions were about)."""
    failed: list[Call] = [(m["tool"], m["work_order"]) for m in _FAILED.finditer(content)]
    unknown: list[Call] = [(m["tool"], m["work_order"]) for m in _UNKNOWN.finditer(content)]
    retry = list(failed)
    ask: list[str] = []
    if careful:
        ask = list(dict.fromkeys(wo for _, wo in unknown))
        for wo, written in _status(content).items():
            retry += [(tool, wo) for tool in _timed_out(earlier, wo) if tool not in written]
    else:
        retry += unknown
    if retry or ask:
        actions = [_action(t, wo) for t, wo in dict.fromkeys(retry)]
        actions += [_action(strings.STATUS_TOOL, wo) for wo in ask]
        if ask:
            head = "A call timed out and may have executed; checking its status before any retry."
            why = "A tool call timed out; check its status first."
        else:
            head, why = (
                "The tool failed and executed nothing; retrying the same call.",
                ("A tool call failed; retry it."),
            )
        return Answer(content="\n".join([head, *actions]), reasoning=why)
    if _status(content):
        text = "The status shows what the workspace holds; the work it holds is done."
        return Answer(content=text, reasoning="Status read; nothing further to execute.")
    rejected = RESULT_OPENINGS[1] in content
    if rejected:
        text = "The system rejected that call, so the work was not executed; I will not retry it."
    else:
        text = "The system executed the call and returned its receipt; that work is done."
    return Answer(content=text, reasoning="Tool results received; nothing further to execute.")
