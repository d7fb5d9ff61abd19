"""The reference rule set: our hand-written compile of the airline policy (the oracle).

It lives beside the code as ``tau2gate/rulesets/airline_reference.json``, written by us from
reading the policy (docs/tau2.md lists what each rule encodes and what it leaves out); it
is not the policy text. This module is the only place that reads it.
"""

from __future__ import annotations

from importlib import resources

from tau2gate.parse import Parsed, parse_rules

__all__ = ["REFERENCE_FILE", "reference_rules"]

REFERENCE_FILE = "airline_reference.json"


def reference_rules() -> Parsed:
    """The reference rules, parsed and validated like any compile."""
    text = resources.files("tau2gate").joinpath("rulesets", REFERENCE_FILE).read_text("utf-8")
    return parse_rules(text)
