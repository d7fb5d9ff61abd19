"""The retail domain's scripted naive agent (``scripted/tau2-naive`` on the retail tasks).

A policy-blind agent, the retail twin of :mod:`tau2gate.airline.scripted`: asked to cancel
with an order id (``#W`` and digits) in the request, it calls ``cancel_pending_order`` on it
at once with the reason ``no longer needed``, without checking the order's status or the
user's reason; after the tool result it reports it; otherwise it says it can only cancel.
Pure; :mod:`tau2gate.scripted` serves it over HTTP.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from tau2gate.domain import message_text
from tau2gate.retail.strings import DONE, ONLY_CANCEL

__all__ = ["REASON", "agent_reply"]

_ORDER = re.compile(r"#W\d{7}\b")
REASON = "no longer needed"


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
        found = _ORDER.search(text)
        if "cancel" in text.lower() and found is not None:
            args = {"order_id": found.group(0), "reason": REASON}
            return {"tool_call": ("cancel_pending_order", args)}
        break
    return {"content": ONLY_CANCEL}
