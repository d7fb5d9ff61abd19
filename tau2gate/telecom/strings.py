"""The telecom domain's compile prompt and its scripted agent's sentence (all OURS)."""

from __future__ import annotations

__all__ = ["CANNOT_HELP", "COMPILE_PROMPT"]

# OURS: the retail prompt (tau2gate.retail.strings) with the domain named and `now` asked for
# (the policy states its current time; contract end dates are compared with it).
COMPILE_PROMPT = """You are compiling a telecom customer-service policy into deny rules that a gate checks before each database write.

Write tools: {tools}.

A rule refuses a call to one write tool when its condition holds on the call's facts. Facts are computed from the database and the call's arguments; you may use only these (name, type, tools it is defined for: meaning):
{facts}

Output one JSON object and nothing else:
{{"now": "<the policy's current time as YYYY-MM-DDTHH:MM:SS>",
 "rules": [{{"id": "<short-id>", "tool": "<write tool>", "deny_when": <condition>, "message": "<one sentence naming the policy rule>"}}]}}

A condition is one of:
{{"fact": NAME, "op": "eq"|"ne"|"lt"|"le"|"gt"|"ge", "value": LITERAL or {{"fact": NAME}}}}
{{"fact": NAME, "op": "in"|"not_in", "value": [LITERAL, ...]}}
{{"fact": NAME}}  (a bool fact is true)
{{"all": [CONDITION, ...]}}, {{"any": [CONDITION, ...]}}, {{"not": CONDITION}}

Write a rule only for what the policy forbids and the facts can decide; a call the policy allows must not be refused. Comparisons with an unknown fact are false.

<policy>
{policy}
</policy>"""

# OURS: the scripted telecom agent's only sentence (tau2gate.telecom.scripted).
CANNOT_HELP = "I am sorry, I cannot help with this request."
