"""What a τ²-bench domain gives the gate (pure, no I/O): its write tools, its fact vocabulary,
how the facts are computed, its compile prompt and its scripted naive agent.

The core (:mod:`~tau2gate.rules`, :mod:`~tau2gate.parse`, :mod:`~tau2gate.gate`,
:mod:`~tau2gate.compile`, :mod:`~tau2gate.reference`) is domain-free: it reads a
:class:`Domain`. Each domain is one subpackage (``tau2gate/airline/``,
``tau2gate/retail/``) that builds its :class:`Domain` from this module alone, and one line of
:mod:`tau2gate.domains` registers it.

The database is read through :class:`Tables`: one look-up ``row(table, key)`` returning a
plain mapping shaped like the domain's τ²-bench records. :class:`DictState` serves a plain
dict ``{table: {key: row}}`` (our test fixtures); the adapter serves the live database. A fact
the state cannot decide is ``None``; every comparison with ``None`` is false
(:mod:`tau2gate.rules`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, Protocol, TypeVar

import msgspec

__all__ = [
    "DictState",
    "Domain",
    "FactSpec",
    "FactTable",
    "FactType",
    "FactsFn",
    "NaiveAgent",
    "Tables",
    "Value",
    "fact",
    "facts_of",
    "message_text",
    "row_in",
    "row_of",
]

C = TypeVar("C")
Value = bool | int | float | str | None
FactType = Literal["bool", "int", "float", "str"]


class Tables(Protocol):
    """Read access to a domain's database, one record at a time."""

    def row(self, table: str, key: str) -> Mapping[str, Any] | None: ...


def row_of(table: Any, key: Any) -> Mapping[str, Any] | None:
    """``table[key]`` when ``table`` is a mapping and the row is one, else ``None``."""
    if not isinstance(table, Mapping) or not isinstance(key, str):
        return None
    row = table.get(key)
    return row if isinstance(row, Mapping) else None


def row_in(rows: Any, key: Any, field: str) -> Mapping[str, Any] | None:
    """The first row of a list table whose ``field`` equals ``key`` (τ²-bench's telecom
    database keeps its tables as lists)."""
    if not isinstance(rows, list | tuple) or not isinstance(key, str):
        return None
    return next((r for r in rows if isinstance(r, Mapping) and r.get(field) == key), None)


class DictState:
    """:class:`Tables` over a plain dict ``{table: {key: row}}``; a table in ``keys`` is a
    list of rows found by that key field instead."""

    def __init__(self, db: Mapping[str, Any], keys: Mapping[str, str] | None = None) -> None:
        self._db = db
        self._keys = dict(keys or {})

    def row(self, table: str, key: str) -> Mapping[str, Any] | None:
        if table in self._keys:
            return row_in(self._db.get(table), key, self._keys[table])
        return row_of(self._db.get(table), key)


class FactSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One fact: its name, type, the tools it is defined for, and what it means."""

    name: str
    type: FactType
    tools: tuple[str, ...]
    doc: str


def fact(name: str, kind: FactType, tools: tuple[str, ...], doc: str) -> FactSpec:
    """A fact's spec (each domain's table is a list of these beside their functions)."""
    return FactSpec(name=name, type=kind, tools=tools, doc=doc)


def facts_of(facts: Mapping[str, FactSpec], tool: str) -> dict[str, FactSpec]:
    """The facts a rule on ``tool`` may name."""
    return {name: spec for name, spec in facts.items() if tool in spec.tools}


class FactTable(Generic[C]):
    """A domain's facts, each with the function that computes it from the domain's own
    context of one call (``C``): the vocabulary and its evaluation, written once."""

    def __init__(self, rows: Sequence[tuple[FactSpec, Callable[[C], Value]]]) -> None:
        self.facts: dict[str, FactSpec] = {spec.name: spec for spec, _ in rows}
        self._compute = {spec.name: fn for spec, fn in rows}

    def facts_for(self, tool: str) -> dict[str, FactSpec]:
        return facts_of(self.facts, tool)

    def compute(self, tool: str, ctx: C, names: Sequence[str] | None) -> dict[str, Value]:
        """The facts of one call (``names`` only, or all of the tool's)."""
        wanted = names if names is not None else tuple(self.facts_for(tool))
        return {n: self._compute[n](ctx) for n in wanted if tool in self.facts[n].tools}


FactsFn = Callable[
    [str, Mapping[str, Any], Tables, datetime | None, Sequence[str] | None], dict[str, Value]
]
"""``(tool, args, state, now, names) -> facts``: the facts of one call (``names`` only, or
all of the tool's), ``None`` where undecidable."""

NaiveAgent = Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]]
"""The scripted naive agent: OpenAI chat messages in, ``{"content": ...}`` or
``{"tool_call": (name, args)}`` out."""


@dataclass(frozen=True, kw_only=True)
class Domain:
    """One τ²-bench domain as the gate sees it."""

    name: str
    """τ²-bench's domain name (its registry key)."""
    write_tools: tuple[str, ...]
    """The domain's WRITE tools: the gate's scope (READ and generic tools are never checked)."""
    facts: Mapping[str, FactSpec]
    compute: FactsFn
    compile_prompt: str
    """The compile request; ``{tools}``, ``{facts}`` and ``{policy}`` are filled in."""
    needs_now: bool
    """Whether a rule set must state the policy's current time (a missing ``now`` is a
    compile error)."""
    naive_agent: NaiveAgent
    opening: str
    """What the gold-replay check's scripted user says first (OURS)."""
    list_keys: Mapping[str, str] = field(default_factory=dict)
    """Tables the database keeps as lists, with the field that keys their rows."""

    def facts_for(self, tool: str) -> dict[str, FactSpec]:
        """The facts a rule on ``tool`` may name."""
        return facts_of(self.facts, tool)


def message_text(message: Mapping[str, Any]) -> str:
    """The text of an OpenAI chat message (string content, or the text parts of a list)."""
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return content if isinstance(content, str) else ""
