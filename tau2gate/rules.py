"""The deny-rule language: typed predicates over facts, and their evaluation (pure).

A :class:`RuleSet` is a list of :class:`Rule` s; a rule names one WRITE tool and a
predicate ``deny_when``; the gate refuses a call to that tool when the predicate holds on
the call's facts (the domain's vocabulary, :mod:`tau2gate.domain`). Predicates are

* :class:`Compare`: ``fact op value`` with ``op`` one of ``eq ne lt le gt ge in not_in``,
  ``value`` a literal (a list of literals for ``in`` / ``not_in``) or another fact
  (:class:`FactRef`); a comparison involving an undecidable (``None``) fact is false;
* :class:`AllOf` / :class:`AnyOf`: conjunction / disjunction of one or more predicates;
* :class:`Not`: negation.

The JSON form, its parser and its validator are in :mod:`tau2gate.parse`; docs/tau2.md
describes the language with examples.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Literal

import msgspec

from tau2gate.domain import Value

__all__ = [
    "OPS",
    "AllOf",
    "AnyOf",
    "Compare",
    "FactRef",
    "Literal_",
    "Not",
    "Op",
    "Predicate",
    "Rule",
    "RuleSet",
    "evaluate",
    "fact_names",
    "firing",
]

Op = Literal["eq", "ne", "lt", "le", "gt", "ge", "in", "not_in"]
OPS: tuple[str, ...] = ("eq", "ne", "lt", "le", "gt", "ge", "in", "not_in")
Literal_ = bool | int | float | str | tuple[bool | int | float | str, ...]


class FactRef(msgspec.Struct, frozen=True, kw_only=True):
    """A fact on the right-hand side of a comparison."""

    fact: str


class Compare(msgspec.Struct, frozen=True, kw_only=True, tag="compare"):
    fact: str
    op: Op
    value: Literal_ | FactRef


class AllOf(msgspec.Struct, frozen=True, kw_only=True, tag="all"):
    items: tuple[Predicate, ...]


class AnyOf(msgspec.Struct, frozen=True, kw_only=True, tag="any"):
    items: tuple[Predicate, ...]


class Not(msgspec.Struct, frozen=True, kw_only=True, tag="not"):
    item: Predicate


Predicate = Compare | AllOf | AnyOf | Not


class Rule(msgspec.Struct, frozen=True, kw_only=True):
    """Deny a call to ``tool`` when ``deny_when`` holds; ``message`` says why (shown to the agent)."""

    id: str
    tool: str
    deny_when: Predicate
    message: str


class RuleSet(msgspec.Struct, frozen=True, kw_only=True):
    """Compiled rules plus the policy's current time (``now``, which ages airline bookings)
    and the domain whose vocabulary they were validated against (:mod:`tau2gate.domains`)."""

    rules: tuple[Rule, ...]
    now: datetime | None = None
    domain: str = "airline"

    def for_tool(self, tool: str) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.tool == tool)


_ORDERED: dict[str, Callable[[Any, Any], bool]] = {
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}


def _compare(left: Value, op: str, right: Any) -> bool:
    if left is None or right is None:
        return False
    if op in ("in", "not_in"):
        members = right if isinstance(right, tuple) else (right,)
        return (left in members) == (op == "in")
    if op == "eq":
        return bool(left == right)
    if op == "ne":
        return bool(left != right)
    if isinstance(left, str) != isinstance(right, str):
        return False
    return _ORDERED[op](left, right)


def evaluate(pred: Predicate, facts: Mapping[str, Value]) -> bool:
    """Whether ``pred`` holds on ``facts`` (an absent fact counts as undecidable)."""
    if isinstance(pred, Compare):
        right = facts.get(pred.value.fact) if isinstance(pred.value, FactRef) else pred.value
        return _compare(facts.get(pred.fact), pred.op, right)
    if isinstance(pred, AllOf):
        return all(evaluate(p, facts) for p in pred.items)
    if isinstance(pred, AnyOf):
        return any(evaluate(p, facts) for p in pred.items)
    return not evaluate(pred.item, facts)


def fact_names(pred: Predicate) -> set[str]:
    """Every fact a predicate reads."""
    if isinstance(pred, Compare):
        right = {pred.value.fact} if isinstance(pred.value, FactRef) else set()
        return {pred.fact, *right}
    if isinstance(pred, AllOf | AnyOf):
        return set().union(*(fact_names(p) for p in pred.items))
    return fact_names(pred.item)


def firing(rules: tuple[Rule, ...], facts: Mapping[str, Value]) -> tuple[Rule, ...]:
    """The rules whose deny condition holds."""
    return tuple(r for r in rules if evaluate(r.deny_when, facts))
