"""The τ²-bench airline domain of the gate: its facts (:mod:`.facts`), compile prompt
(:mod:`.strings`), reference rules (``reference.json``, read by :mod:`tau2gate.reference`)
and scripted naive agent (:mod:`.scripted`)."""

from tau2gate.airline.facts import FACTS, WRITE_TOOLS, compute_facts, facts_for
from tau2gate.airline.scripted import agent_reply
from tau2gate.airline.strings import COMPILE_PROMPT
from tau2gate.domain import Domain

__all__ = ["DOMAIN", "FACTS", "WRITE_TOOLS", "compute_facts", "facts_for"]

DOMAIN = Domain(
    name="airline",
    write_tools=WRITE_TOOLS,
    facts=FACTS,
    compute=compute_facts,
    compile_prompt=COMPILE_PROMPT,
    needs_now=True,
    naive_agent=agent_reply,
    opening="Hello, I need help with my reservation.",
)
