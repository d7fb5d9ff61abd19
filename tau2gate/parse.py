"""Parse and validate compiled deny rules; write them back as JSON or readable text (pure).

The JSON form (docs/tau2.md)::

    {"now": "2024-05-15T15:00:00",
     "rules": [{"id": "cancel-flown", "tool": "cancel_reservation",
                "deny_when": {"fact": "reservation.any_segment_flown"},
                "message": "part of the trip has already been flown"}]}

A predicate is ``{"all": [P, ...]}``, ``{"any": [P, ...]}``, ``{"not": P}`` or a comparison
``{"fact": NAME, "op": OP, "value": V}`` where ``V`` is a literal, a list of literals (``in``,
``not_in``) or ``{"fact": NAME}``; ``{"fact": NAME}`` alone means ``NAME eq true`` for a
boolean fact.

:func:`parse_rules` never repairs anything: a rule that fails validation (unknown tool or
fact, a fact outside its tool's vocabulary, an operator or literal of the wrong type, a
duplicate id) is dropped with an error naming it, the rest are kept; text that holds no
JSON object gives an empty rule set and one error. Those errors and that rule set are what
the gate runs with: compile errors flow into the gate uncorrected, as in the testbed. The
only leniency is the envelope: the first ``{...}`` object in the text is read, so a reply
wrapped in a code fence or prose still parses.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, cast

import msgspec

from tau2gate.domain import Domain, FactType
from tau2gate.domains import get_domain
from tau2gate.rules import (
    OPS,
    AllOf,
    AnyOf,
    Compare,
    FactRef,
    Literal_,
    Not,
    Op,
    Predicate,
    Rule,
    RuleSet,
)

__all__ = ["Parsed", "RuleError", "describe", "parse_rules", "rules_to_json"]


class RuleError(Exception):
    """One validation failure (its message names the rule and the problem)."""


class Parsed(msgspec.Struct, frozen=True, kw_only=True):
    """What a compile produced: the rules that validated and the errors, uncorrected."""

    rules: RuleSet
    errors: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors


def _first_object(text: str) -> Any:
    start = text.find("{")
    while start != -1:
        try:
            value, _ = json.JSONDecoder().raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        return value
    raise RuleError("no JSON object in the compile output")


def parse_rules(text: str, domain: Domain | str | None = None) -> Parsed:
    """Parse compiled rules for ``domain`` (default airline); invalid rules are dropped with
    an error, never fixed."""
    dom = get_domain(domain)
    try:
        doc = _first_object(text)
    except RuleError as exc:
        return Parsed(rules=RuleSet(rules=(), domain=dom.name), errors=(str(exc),))
    return parse_document(doc, dom)


def parse_document(doc: Any, domain: Domain | str | None = None) -> Parsed:
    """:func:`parse_rules` on already-decoded JSON."""
    dom = get_domain(domain)
    if not isinstance(doc, dict):
        return Parsed(
            rules=RuleSet(rules=(), domain=dom.name),
            errors=("the rule document is not an object",),
        )
    errors: list[str] = []
    now = _now(doc.get("now"), errors, required=dom.needs_now)
    raw = doc.get("rules")
    if not isinstance(raw, list):
        errors.append("'rules' is not a list")
        raw = []
    rules: list[Rule] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        try:
            rule = _rule(item, index, dom)
            if rule.id in seen:
                raise RuleError(f"rule {rule.id!r}: duplicate id")
        except RuleError as exc:
            errors.append(str(exc))
            continue
        seen.add(rule.id)
        rules.append(rule)
    return Parsed(rules=RuleSet(rules=tuple(rules), now=now, domain=dom.name), errors=tuple(errors))


def _now(value: Any, errors: list[str], *, required: bool) -> datetime | None:
    if value is None:
        if required:
            errors.append("'now' is missing: booking ages are undecidable")
        return None
    try:
        return datetime.fromisoformat(str(value)).replace(tzinfo=None)
    except ValueError:
        errors.append(f"'now' is not an ISO date-time: {value!r}")
        return None


def _rule(item: Any, index: int, dom: Domain) -> Rule:
    if not isinstance(item, dict):
        raise RuleError(f"rule #{index}: not an object")
    rid = item.get("id")
    name = repr(rid) if isinstance(rid, str) and rid else f"#{index}"
    if not isinstance(rid, str) or not rid:
        raise RuleError(f"rule {name}: 'id' must be a non-empty string")
    tool = item.get("tool")
    if tool not in dom.write_tools:
        raise RuleError(f"rule {name}: unknown write tool {tool!r}")
    message = item.get("message", "")
    if not isinstance(message, str):
        raise RuleError(f"rule {name}: 'message' must be a string")
    unknown = set(item) - {"id", "tool", "deny_when", "message"}
    if unknown:
        raise RuleError(f"rule {name}: unknown keys {sorted(unknown)}")
    try:
        pred = _pred(item.get("deny_when"), cast(str, tool), dom)
    except RuleError as exc:
        raise RuleError(f"rule {name}: {exc}") from None
    return Rule(id=rid, tool=cast(str, tool), deny_when=pred, message=message)


def _pred(node: Any, tool: str, dom: Domain) -> Predicate:
    if not isinstance(node, dict) or not node:
        raise RuleError(f"a predicate must be a non-empty object, got {node!r}")
    keys = set(node)
    if keys in ({"all"}, {"any"}):
        key = next(iter(keys))
        items = node[key]
        if not isinstance(items, list) or not items:
            raise RuleError(f"'{key}' needs a non-empty list")
        preds = tuple(_pred(p, tool, dom) for p in items)
        return AllOf(items=preds) if key == "all" else AnyOf(items=preds)
    if keys == {"not"}:
        return Not(item=_pred(node["not"], tool, dom))
    if "fact" in keys and keys <= {"fact", "op", "value"}:
        return _compare(node, tool, dom)
    raise RuleError(f"unknown predicate keys {sorted(keys)}")


def _fact_type(name: Any, tool: str, dom: Domain) -> FactType:
    if not isinstance(name, str) or name not in dom.facts:
        raise RuleError(f"unknown fact {name!r}")
    spec = dom.facts[name]
    if tool not in spec.tools:
        raise RuleError(f"fact {name!r} is not defined for {tool}")
    return spec.type


def _compare(node: dict[str, Any], tool: str, dom: Domain) -> Compare:
    fact = node["fact"]
    kind = _fact_type(fact, tool, dom)
    if "op" not in node and "value" not in node:
        if kind != "bool":
            raise RuleError(f"fact {fact!r} is {kind}: a bare fact must be bool")
        return Compare(fact=fact, op="eq", value=True)
    op = node.get("op")
    if op not in OPS:
        raise RuleError(f"unknown op {op!r} (one of {', '.join(OPS)})")
    if "value" not in node:
        raise RuleError(f"comparison on {fact!r} has no 'value'")
    if op in ("lt", "le", "gt", "ge") and kind not in ("int", "float"):
        raise RuleError(f"op {op!r} needs a number fact, {fact!r} is {kind}")
    value = _value(node["value"], cast(Op, op), kind, tool, dom)
    return Compare(fact=fact, op=cast(Op, op), value=value)


def _value(raw: Any, op: Op, kind: FactType, tool: str, dom: Domain) -> Literal_ | FactRef:
    if isinstance(raw, dict):
        if set(raw) != {"fact"} or op in ("in", "not_in"):
            raise RuleError(f"bad right-hand side {raw!r}")
        other = _fact_type(raw["fact"], tool, dom)
        if not _same_kind(kind, other):
            raise RuleError(f"cannot compare a {kind} fact with {raw['fact']!r} ({other})")
        return FactRef(fact=raw["fact"])
    if op in ("in", "not_in"):
        if not isinstance(raw, list) or not raw:
            raise RuleError(f"op {op!r} needs a non-empty list")
        return tuple(_literal(v, kind) for v in raw)
    return _literal(raw, kind)


def _same_kind(a: FactType, b: FactType) -> bool:
    numbers = {"int", "float"}
    return a == b or (a in numbers and b in numbers)


def _literal(raw: Any, kind: FactType) -> bool | int | float | str:
    ok = {
        "bool": isinstance(raw, bool),
        "int": isinstance(raw, int) and not isinstance(raw, bool),
        "float": isinstance(raw, int | float) and not isinstance(raw, bool),
        "str": isinstance(raw, str),
    }[kind]
    if not ok:
        raise RuleError(f"literal {raw!r} is not a {kind}")
    return cast(bool | int | float | str, raw)


def _pred_doc(pred: Predicate) -> dict[str, Any]:
    if isinstance(pred, AllOf):
        return {"all": [_pred_doc(p) for p in pred.items]}
    if isinstance(pred, AnyOf):
        return {"any": [_pred_doc(p) for p in pred.items]}
    if isinstance(pred, Not):
        return {"not": _pred_doc(pred.item)}
    value = pred.value
    if isinstance(value, FactRef):
        out: Any = {"fact": value.fact}
    else:
        out = list(value) if isinstance(value, tuple) else value
    return {"fact": pred.fact, "op": pred.op, "value": out}


def rules_to_json(rules: RuleSet) -> str:
    """The JSON form of a rule set (``parse_rules(rules_to_json(r)).rules == r``)."""
    doc = {
        "now": None if rules.now is None else rules.now.isoformat(),
        "rules": [
            {"id": r.id, "tool": r.tool, "deny_when": _pred_doc(r.deny_when), "message": r.message}
            for r in rules.rules
        ],
    }
    if rules.now is None:
        del doc["now"]
    return json.dumps(doc, indent=1)


_WORDS = {"eq": "=", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _text(pred: Predicate) -> str:
    if isinstance(pred, AllOf | AnyOf):
        joiner = " and " if isinstance(pred, AllOf) else " or "
        return "(" + joiner.join(_text(p) for p in pred.items) + ")"
    if isinstance(pred, Not):
        return "not " + _text(pred.item)
    value = pred.value
    if isinstance(value, FactRef):
        right = value.fact
    elif isinstance(value, tuple):
        right = "[" + ", ".join(json.dumps(v) for v in value) + "]"
    else:
        right = json.dumps(value)
    op = _WORDS.get(pred.op, pred.op.replace("_", " "))
    return f"{pred.fact} {op} {right}"


def describe(rule: Rule) -> str:
    """One readable line: the tool, the deny condition and the rule's message."""
    return f"{rule.tool} is refused when {_text(rule.deny_when)}: {rule.message}"
