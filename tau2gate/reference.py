"""The reference rule sets: our hand-written compile of each domain's policy (the oracle).

Each lives beside its domain's code as ``tau2gate/<domain>/reference.json``, written by us from
reading the policy (docs/tau2.md lists what each rule encodes and what it leaves out); it is
not the policy text. This module is the only place that reads them.
"""

from __future__ import annotations

from importlib import resources

from tau2gate.domain import Domain
from tau2gate.domains import get_domain
from tau2gate.parse import Parsed, parse_rules

__all__ = ["REFERENCE_FILE", "reference_rules", "reference_text"]

REFERENCE_FILE = "reference.json"


def reference_text(domain: Domain | str | None = None) -> str:
    """The reference rule file of ``domain`` (default airline), as written."""
    name = get_domain(domain).name
    return resources.files(f"tau2gate.{name}").joinpath(REFERENCE_FILE).read_text("utf-8")


def reference_rules(domain: Domain | str | None = None) -> Parsed:
    """The reference rules of ``domain`` (default airline), parsed and validated like any
    compile."""
    return parse_rules(reference_text(domain), domain)
