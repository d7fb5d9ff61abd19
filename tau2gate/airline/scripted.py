"""The airline domain's scripted naive agent (``scripted/tau2-naive`` on the airline tasks).

A policy-blind agent: asked to cancel with a reservation id in the request, it calls
``cancel_reservation`` at once, without checking eligibility; after the tool result it
reports it; otherwise it says it can only cancel. It is the τ²-bench analogue of the
testbed's ``always-book`` policy: the writes it attempts are exactly the kind a
database-state gate can judge. Pure; :mod:`tau2gate.scripted` serves it over HTTP.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from tau2gate.domain import message_text

__all__ = ["DONE", "ONLY_CANCEL", "agent_reply"]

_RESERVATION = re.compile(r"\b(?=[A-Z0-9]*[0-9])[A-Z0-9]{6}\b")

# OURS: the scripted agent's two sentences.
DONE = "The cancellation request has been processed: {result}"
ONLY_CANCEL = "I can only help with cancelling a reservation; please give its id."


def agent_reply(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The naive agent's next message: ``{"content": ...}`` or ``{"tool_call": (name, args)}``."""
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        return {"content": DONE.format(result=message_text(last)[:300])}
    if any(m.get("role") == "tool" for m in messages):
        return {"content": ONLY_CANCEL}
    for m in reversed(messages):
        if m.get("role") != "user":
            continue
        text = message_text(m)
        found = _RESERVATION.search(text)
        if "cancel" in text.lower() and found is not None:
            return {"tool_call": ("cancel_reservation", {"reservation_id": found.group(0)})}
        break
    return {"content": ONLY_CANCEL}
