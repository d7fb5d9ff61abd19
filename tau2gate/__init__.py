"""The τ²-bench gate (Section 5.4, Appendix H): deny rules over a domain's WRITE tools,
compiled from its policy, checked at tool dispatch against the database state.

The core (:mod:`~tau2gate.domain`, :mod:`~tau2gate.rules`, :mod:`~tau2gate.parse`,
:mod:`~tau2gate.gate`, :mod:`~tau2gate.compile`, :mod:`~tau2gate.reference`) is pure,
domain-free and imports no τ²-bench; each τ²-bench domain is one subpackage
(:mod:`tau2gate.airline`, :mod:`tau2gate.retail`) registered in :mod:`tau2gate.domains`;
:mod:`tau2gate.adapter` imports τ²-bench lazily (``pip install -e '.[tau2]'``).
"""

from tau2gate.domain import DictState
from tau2gate.domains import get_domain
from tau2gate.gate import RUNGS, Gate, rules_shown
from tau2gate.parse import parse_rules, rules_to_json
from tau2gate.reference import reference_rules
from tau2gate.rules import evaluate

__all__ = [
    "RUNGS",
    "DictState",
    "Gate",
    "evaluate",
    "get_domain",
    "parse_rules",
    "reference_rules",
    "rules_shown",
    "rules_to_json",
]
