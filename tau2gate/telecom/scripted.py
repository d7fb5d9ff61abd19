"""The telecom domain's scripted agent: it never writes.

Every telecom write names a customer id and a line or bill id that only the read tools
reveal (the user gives a phone number), so a policy-blind agent in the airline and retail
mould (one write straight from the user's words) has nothing to write with. This agent only
answers :data:`~tau2gate.telecom.strings.CANNOT_HELP`; the telecom rungs are exercised by the
gold-replay agent and by a real model (docs/tau2.md). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tau2gate.telecom.strings import CANNOT_HELP

__all__ = ["agent_reply"]


def agent_reply(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Always ``{"content": CANNOT_HELP}``."""
    return {"content": CANNOT_HELP}
