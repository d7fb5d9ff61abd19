"""The telecom domain's compile prompt and its scripted agent's sentence (all OURS)."""

from __future__ import annotations

from tau2gate.strings import compile_prompt

__all__ = ["CANNOT_HELP", "COMPILE_PROMPT"]

# OURS: the shared compile request (tau2gate.strings.COMPILE_PROMPT) for the telecom
# policy, with `now` (the policy states its current time; contract end dates are compared
# with it).
COMPILE_PROMPT = compile_prompt("a telecom", now=True)

# OURS: the scripted telecom agent's only sentence (tau2gate.telecom.scripted).
CANNOT_HELP = "I am sorry, I cannot help with this request."
