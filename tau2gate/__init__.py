"""The τ²-bench gate (Section 5.4, Appendix H): deny rules over a domain's WRITE tools,
compiled from its policy, checked at tool dispatch against the database state.

The core (:mod:`~tau2gate.domain`, :mod:`~tau2gate.rules`, :mod:`~tau2gate.parse`,
:mod:`~tau2gate.gate`, :mod:`~tau2gate.compile`, :mod:`~tau2gate.reference`) is pure,
domain-free and imports no τ²-bench; each τ²-bench domain is one subpackage
(:mod:`tau2gate.airline`, :mod:`tau2gate.retail`) registered in :mod:`tau2gate.domains`;
:mod:`tau2gate.adapter` imports τ²-bench lazily (``pip install -e '.[tau2]'``).
"""

from tau2gate.domain import DictState, Domain, FactSpec, Tables
from tau2gate.domains import DOMAINS, get_domain
from tau2gate.gate import RUNGS, Dispatch, Gate, Rung, Verdict, rules_shown
from tau2gate.parse import Parsed, describe, parse_rules, rules_to_json
from tau2gate.reference import reference_rules
from tau2gate.rules import Rule, RuleSet, evaluate

__all__ = [
    "DOMAINS",
    "RUNGS",
    "DictState",
    "Dispatch",
    "Domain",
    "FactSpec",
    "Gate",
    "Parsed",
    "Rule",
    "RuleSet",
    "Rung",
    "Tables",
    "Verdict",
    "describe",
    "evaluate",
    "get_domain",
    "parse_rules",
    "reference_rules",
    "rules_shown",
    "rules_to_json",
]
