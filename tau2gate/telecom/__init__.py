"""The τ²-bench telecom domain of the gate: its facts (:mod:`.facts`), compile prompt
(:mod:`.strings`), reference rules (``reference.json``, read by :mod:`tau2gate.reference`)
and scripted agent (:mod:`.scripted`, which never writes)."""

from tau2gate.domain import Domain
from tau2gate.telecom.facts import FACTS, LIST_KEYS, WRITE_TOOLS, compute_facts, facts_for
from tau2gate.telecom.scripted import agent_reply
from tau2gate.telecom.strings import COMPILE_PROMPT

__all__ = ["DOMAIN", "FACTS", "WRITE_TOOLS", "compute_facts", "facts_for"]

DOMAIN = Domain(
    name="telecom",
    write_tools=WRITE_TOOLS,
    facts=FACTS,
    compute=compute_facts,
    compile_prompt=COMPILE_PROMPT,
    needs_now=True,
    naive_agent=agent_reply,
    opening="Hello, I need help with my phone line.",
    list_keys=LIST_KEYS,
)
