"""The retail domain's scripted naive agent (``scripted/tau2-naive`` on the retail tasks).

A policy-blind agent, the retail twin of :mod:`tau2gate.airline.scripted`: it acts on the
order the user names (``#W`` and seven digits in the request) without checking its status.
Asked to cancel, it calls ``cancel_pending_order`` at once with the reason ``no longer
needed``; asked to return, it reads the order (``get_order_details``, to learn its items and
payment) and returns every item to the order's original payment method. After a write's
result it reports it; otherwise it says what it can do. Pure; :mod:`tau2gate.scripted`
serves it over HTTP.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tau2gate.domain import message_text
from tau2gate.retail.strings import DONE, ONLY_CANCEL

__all__ = ["REASON", "agent_reply"]

_ORDER = re.compile(r"#W\d{7}\b")
REASON = "no longer needed"


def _request(messages: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    """``(verb, order id)`` from the user's first message naming an order and a verb."""
    for m in messages:
        if m.get("role") != "user":
            continue
        text = message_text(m)
        found = _ORDER.search(text)
        verb = next((v for v in ("cancel", "return") if v in text.lower()), None)
        if found is not None and verb is not None:
            return verb, found.group(0)
    return None


def _return_call(order_text: str, order_id: str) -> dict[str, Any] | None:
    try:
        order = json.loads(order_text)
    except ValueError:
        return None
    if not isinstance(order, dict):
        return None
    items = [i.get("item_id") for i in order.get("items") or [] if isinstance(i, dict)]
    pays = [p for p in order.get("payment_history") or [] if isinstance(p, dict)]
    if not items or not pays:
        return None
    args = {
        "order_id": order_id,
        "item_ids": items,
        "payment_method_id": pays[0].get("payment_method_id"),
    }
    return {"tool_call": ("return_delivered_order_items", args)}


def agent_reply(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The naive agent's next message: ``{"content": ...}`` or ``{"tool_call": (name, args)}``."""
    request = _request(messages)
    tools = [m for m in messages if m.get("role") == "tool"]
    if request is None:
        return {"content": ONLY_CANCEL}
    verb, order_id = request
    if verb == "cancel":
        if tools:
            return {"content": DONE.format(result=message_text(tools[-1])[:300])}
        return {"tool_call": ("cancel_pending_order", {"order_id": order_id, "reason": REASON})}
    if not tools:
        return {"tool_call": ("get_order_details", {"order_id": order_id})}
    if len(tools) == 1:
        call = _return_call(message_text(tools[0]), order_id)
        if call is not None:
            return call
    return {"content": DONE.format(result=message_text(tools[-1])[:300])}
