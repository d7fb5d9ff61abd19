"""The τ²-bench airline gate (Section 5.4, Appendix H): deny rules over the airline WRITE
tools, compiled from the policy, checked at tool dispatch against the database state.

The core (:mod:`~tau2gate.facts`, :mod:`~tau2gate.rules`, :mod:`~tau2gate.parse`,
:mod:`~tau2gate.gate`, :mod:`~tau2gate.compile`) is pure and imports no τ²-bench;
:mod:`tau2gate.adapter` imports τ²-bench lazily (``pip install -e '.[tau2]'``).
"""

from tau2gate.facts import FACTS, WRITE_TOOLS, DictState, compute_facts
from tau2gate.gate import RUNGS, Gate, rules_shown
from tau2gate.parse import parse_rules, rules_to_json
from tau2gate.reference import reference_rules
from tau2gate.rules import evaluate

__all__ = [
    "FACTS",
    "RUNGS",
    "WRITE_TOOLS",
    "DictState",
    "Gate",
    "compute_facts",
    "evaluate",
    "parse_rules",
    "reference_rules",
    "rules_shown",
    "rules_to_json",
]
