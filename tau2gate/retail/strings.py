"""The retail domain's compile prompt and its scripted agent's sentences (all OURS)."""

from __future__ import annotations

from tau2gate.strings import compile_prompt

__all__ = ["COMPILE_PROMPT", "DONE", "ONLY_CANCEL"]

# OURS: the shared compile request (tau2gate.strings.COMPILE_PROMPT) for the retail
# policy, with no `now` (no retail fact reads the time).
COMPILE_PROMPT = compile_prompt("a retail", now=False)

# OURS: the scripted naive retail agent's two sentences (tau2gate.retail.scripted).
DONE = "Your request has been processed: {result}"
ONLY_CANCEL = "I can only help with cancelling or returning an order; please give its order id."
