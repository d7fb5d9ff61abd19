"""The gate at tool dispatch and the rungs of Table 20 (pure).

:class:`Gate` checks one write call against the compiled rules and the database state and
returns a :class:`Verdict`. :class:`Dispatch` is one rung's decision for one call, given the
verdict: execute it, or answer with a tool result of ours instead (a veto or a notice is an
ordinary tool result, so READ tools and the benchmark's scoring stay unchanged).

The rungs (``RUNGS``, in ladder order):

* ``none``: no gate; every call executes (verdicts are still computed, to count executed
  rule-violating writes);
* ``shown``: the rules are shown to the agent (:data:`tau2gate.strings.RULES_SHOWN`), every
  call executes;
* ``advisory``: a denied call is held back once with a notice the agent may override by
  repeating the same call, which then executes;
* ``enforce``: a denied call never executes; the veto is the tool result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from tau2gate.domain import Domain, Tables
from tau2gate.domains import get_domain
from tau2gate.parse import describe
from tau2gate.rules import RuleSet, fact_names, firing
from tau2gate.strings import ADVISORY_NOTICE, RULES_SHOWN, VETO

__all__ = ["RUNGS", "Dispatch", "Gate", "Rung", "Verdict", "rules_shown"]

Rung = Literal["none", "shown", "advisory", "enforce"]
RUNGS: tuple[Rung, ...] = ("none", "shown", "advisory", "enforce")


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """The gate's judgement of one call: the rules that deny it (none: admitted)."""

    tool: str
    denied_by: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()

    @property
    def admitted(self) -> bool:
        return not self.denied_by


class Dispatch(msgspec.Struct, frozen=True, kw_only=True):
    """What a rung does with one call: execute it, or answer ``result`` in its place."""

    execute: bool
    result: str | None = None
    verdict: Verdict
    overridden: bool = False


class Gate:
    """Deny rules over a domain's WRITE tools, evaluated at dispatch against the database
    (the domain is the rule set's, :attr:`RuleSet.domain`)."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.domain: Domain = get_domain(rules.domain)
        self._by_tool = {tool: rules.for_tool(tool) for tool in self.domain.write_tools}
        self._facts = {
            tool: sorted(set().union(*(fact_names(r.deny_when) for r in rs)))
            for tool, rs in self._by_tool.items()
        }

    def check(self, tool: str, args: Mapping[str, Any], state: Tables) -> Verdict:
        """The verdict on ``tool(**args)`` in the current database state."""
        rules = self._by_tool.get(tool, ())
        if not rules:
            return Verdict(tool=tool)
        facts = self.domain.compute(tool, args, state, self.rules.now, self._facts[tool])
        hits = firing(rules, facts)
        return Verdict(
            tool=tool,
            denied_by=tuple(r.id for r in hits),
            reasons=tuple(r.message for r in hits),
        )

    def dispatch(self, rung: Rung, verdict: Verdict, *, repeated: bool = False) -> Dispatch:
        """One rung's decision; ``repeated``: the same call came straight after a notice."""
        if verdict.admitted or rung in ("none", "shown"):
            return Dispatch(execute=True, verdict=verdict)
        reasons = " ".join(_sentence(r) for r in verdict.reasons)
        if rung == "advisory":
            if repeated:
                return Dispatch(execute=True, verdict=verdict, overridden=True)
            text = ADVISORY_NOTICE.format(tool=verdict.tool, reasons=reasons)
            return Dispatch(execute=False, result=text, verdict=verdict)
        return Dispatch(
            execute=False, result=VETO.format(tool=verdict.tool, reasons=reasons), verdict=verdict
        )


def _sentence(text: str) -> str:
    text = text.strip() or "a compiled rule forbids it"
    return text if text.endswith((".", "!", "?")) else text + "."


def rules_shown(rules: RuleSet) -> str:
    """The block the ``shown`` rung appends to the agent's system prompt."""
    lines = "\n".join(f"- {describe(r)}" for r in rules.rules) or "- (no rules)"
    return RULES_SHOWN.format(rules=lines)
