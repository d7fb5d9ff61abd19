"""The policy compile: the agent model turns the airline policy into deny rules (pure).

:func:`compile_prompt` builds the request (:data:`tau2gate.strings.COMPILE_PROMPT` with the
fact vocabulary and the policy as the benchmark ships it); :func:`read_compile` parses and
validates the reply with :func:`tau2gate.parse.parse_rules`. Nothing is repaired or retried:
the rules that validated and the errors are what the gate runs with.
"""

from __future__ import annotations

from tau2gate.facts import FACTS, WRITE_TOOLS
from tau2gate.parse import Parsed, parse_rules
from tau2gate.strings import COMPILE_PROMPT

__all__ = ["compile_prompt", "fact_vocabulary", "read_compile"]


def fact_vocabulary() -> str:
    """One line per fact: ``name (type; tools): meaning``."""
    return "\n".join(
        f"- {s.name} ({s.type}; {', '.join(s.tools)}): {s.doc}" for s in FACTS.values()
    )


def compile_prompt(policy: str) -> str:
    """The compile request for ``policy``."""
    return COMPILE_PROMPT.format(
        tools=", ".join(WRITE_TOOLS), facts=fact_vocabulary(), policy=policy.strip()
    )


def read_compile(reply: str) -> Parsed:
    """The compiled rules and the compile errors, uncorrected."""
    return parse_rules(reply)
