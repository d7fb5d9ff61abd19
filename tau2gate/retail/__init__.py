"""The τ²-bench retail domain of the gate: its facts (:mod:`.facts`), compile prompt
(:mod:`.strings`), reference rules (``reference.json``, read by :mod:`tau2gate.reference`)
and scripted naive agent (:mod:`.scripted`)."""

from tau2gate.domain import Domain
from tau2gate.retail.facts import FACTS, WRITE_TOOLS, compute_facts, facts_for
from tau2gate.retail.scripted import agent_reply
from tau2gate.retail.strings import COMPILE_PROMPT

__all__ = ["DOMAIN", "FACTS", "WRITE_TOOLS", "compute_facts", "facts_for"]

DOMAIN = Domain(
    name="retail",
    write_tools=WRITE_TOOLS,
    facts=FACTS,
    compute=compute_facts,
    compile_prompt=COMPILE_PROMPT,
    needs_now=False,
    naive_agent=agent_reply,
    opening="Hello, I need help with my order.",
)
