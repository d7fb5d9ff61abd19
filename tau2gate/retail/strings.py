"""The retail domain's compile prompt and its scripted agent's sentences (all OURS)."""

from __future__ import annotations

__all__ = ["COMPILE_PROMPT", "DONE", "ONLY_CANCEL"]

# OURS: the agent model compiles the retail policy into deny rules with this prompt: the
# airline prompt (tau2gate.airline.strings) with the domain named and no `now` (no retail
# fact reads the time). {facts} is the fact vocabulary, {tools} the seven WRITE tools,
# {policy} the benchmark's policy text as the benchmark ships it.
COMPILE_PROMPT = """You are compiling a retail customer-service policy into deny rules that a gate checks before each database write.

Write tools: {tools}.

A rule refuses a call to one write tool when its condition holds on the call's facts. Facts are computed from the database and the call's arguments; you may use only these (name, type, tools it is defined for: meaning):
{facts}

Output one JSON object and nothing else:
{{"rules": [{{"id": "<short-id>", "tool": "<write tool>", "deny_when": <condition>, "message": "<one sentence naming the policy rule>"}}]}}

A condition is one of:
{{"fact": NAME, "op": "eq"|"ne"|"lt"|"le"|"gt"|"ge", "value": LITERAL or {{"fact": NAME}}}}
{{"fact": NAME, "op": "in"|"not_in", "value": [LITERAL, ...]}}
{{"fact": NAME}}  (a bool fact is true)
{{"all": [CONDITION, ...]}}, {{"any": [CONDITION, ...]}}, {{"not": CONDITION}}

Write a rule only for what the policy forbids and the facts can decide; a call the policy allows must not be refused. Comparisons with an unknown fact are false.

<policy>
{policy}
</policy>"""

# OURS: the scripted naive retail agent's two sentences (tau2gate.retail.scripted).
DONE = "Your request has been processed: {result}"
ONLY_CANCEL = "I can only help with cancelling or returning an order; please give its order id."
