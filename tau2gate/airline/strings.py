"""The airline domain's compile prompt (OURS; the paper describes the compile only in prose)."""

from __future__ import annotations

__all__ = ["COMPILE_PROMPT"]

# OURS: the agent model compiles the airline policy into deny rules with this prompt.
# {facts} is the fact vocabulary (one line per fact: name, type, tools, meaning), {tools}
# the six WRITE tools, {policy} the benchmark's policy text as the benchmark ships it.
COMPILE_PROMPT = """You are compiling an airline customer-service policy into deny rules that a gate checks before each database write.

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
