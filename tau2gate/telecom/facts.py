"""The fact vocabulary the telecom deny rules are written over (pure, no I/O).

The database is read through :class:`tau2gate.domain.Tables`: tables ``customers``,
``lines``, ``bills`` (τ²-bench keeps them as lists; the domain's ``list_keys`` name the key
fields), rows shaped like τ²-bench's telecom records (a customer's ``line_ids`` and
``bill_ids``; a line's ``status``, ``contract_end_date``, ``roaming_enabled``; a bill's
``status``). Only the agent's side is read: the user's device (τ²-bench's dual control) is
not the gate's to judge. A fact the state cannot decide is ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from tau2gate.domain import FactSpec, FactTable, Tables, Value, fact

__all__ = ["FACTS", "LIST_KEYS", "WRITE_TOOLS", "compute_facts", "facts_for"]

WRITE_TOOLS: tuple[str, ...] = (
    "disable_roaming",
    "enable_roaming",
    "refuel_data",
    "resume_line",
    "send_payment_request",
    "suspend_line",
)
"""The six WRITE tools of τ²-bench's telecom agent (the gate's scope; the user's device tools
are the user's)."""

LIST_KEYS: dict[str, str] = {
    "customers": "customer_id",
    "lines": "line_id",
    "bills": "bill_id",
    "plans": "plan_id",
    "devices": "device_id",
}

_LINE = ("disable_roaming", "enable_roaming", "refuel_data", "resume_line", "suspend_line")
_ALL = WRITE_TOOLS

OVERDUE = "Overdue"
AWAITING = "Awaiting Payment"


def _seq(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list | tuple) else ()


class _Ctx:
    def __init__(
        self, tool: str, args: Mapping[str, Any], state: Tables, now: datetime | None
    ) -> None:
        self.args = args
        self.now = now
        cid, lid, bid = args.get("customer_id"), args.get("line_id"), args.get("bill_id")
        self.customer = state.row("customers", cid) if isinstance(cid, str) else None
        self.line = state.row("lines", lid) if tool in _LINE and isinstance(lid, str) else None
        self.bill = (
            state.row("bills", bid)
            if tool == "send_payment_request" and isinstance(bid, str)
            else None
        )
        self.bills: list[Mapping[str, Any]] | None = None
        if self.customer is not None:
            found = (state.row("bills", b) for b in _seq(self.customer.get("bill_ids")))
            self.bills = [b for b in found if b is not None]


def _line_status(ctx: _Ctx) -> Value:
    value = None if ctx.line is None else ctx.line.get("status")
    return value if isinstance(value, str) else None


def _line_roaming(ctx: _Ctx) -> Value:
    value = None if ctx.line is None else ctx.line.get("roaming_enabled")
    return value if isinstance(value, bool) else None


def _owns_line(ctx: _Ctx) -> Value:
    if ctx.customer is None:
        return None
    return ctx.args.get("line_id") in _seq(ctx.customer.get("line_ids"))


def _contract_ended(ctx: _Ctx) -> Value:
    end = None if ctx.line is None else ctx.line.get("contract_end_date")
    if not isinstance(end, str) or ctx.now is None:
        return None
    try:
        return date.fromisoformat(end[:10]) < ctx.now.date()
    except ValueError:
        return None


def _any_bill(status: str) -> Callable[[_Ctx], Value]:
    def get(ctx: _Ctx) -> Value:
        return None if ctx.bills is None else any(b.get("status") == status for b in ctx.bills)

    return get


def _bill_status(ctx: _Ctx) -> Value:
    value = None if ctx.bill is None else ctx.bill.get("status")
    return value if isinstance(value, str) else None


def _bill_of_customer(ctx: _Ctx) -> Value:
    if ctx.customer is None:
        return None
    return ctx.args.get("bill_id") in _seq(ctx.customer.get("bill_ids"))


def _gb_amount(ctx: _Ctx) -> Value:
    value = ctx.args.get("gb_amount")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


_TABLE: tuple[tuple[FactSpec, Callable[[_Ctx], Value]], ...] = (
    (
        fact(
            "line.status",
            "str",
            _LINE,
            "'Active', 'Suspended', 'Pending Activation' or 'Closed'",
        ),
        _line_status,
    ),
    (
        fact("line.roaming_enabled", "bool", _LINE, "roaming is enabled on the line"),
        _line_roaming,
    ),
    (
        fact(
            "line.contract_ended",
            "bool",
            _LINE,
            "the line's contract end date is before the rule set's `now`",
        ),
        _contract_ended,
    ),
    (
        fact("customer.owns_line", "bool", _LINE, "line_id is one of the customer's lines"),
        _owns_line,
    ),
    (
        fact("customer.has_overdue_bill", "bool", _ALL, "a bill of the customer is Overdue"),
        _any_bill(OVERDUE),
    ),
    (
        fact(
            "customer.has_bill_awaiting_payment",
            "bool",
            _ALL,
            "a bill of the customer is Awaiting Payment",
        ),
        _any_bill(AWAITING),
    ),
    (
        fact(
            "bill.status",
            "str",
            ("send_payment_request",),
            "'Draft', 'Issued', 'Awaiting Payment', 'Paid', 'Overdue' or 'Disputed'",
        ),
        _bill_status,
    ),
    (
        fact(
            "bill.of_customer",
            "bool",
            ("send_payment_request",),
            "bill_id is one of the customer's bills",
        ),
        _bill_of_customer,
    ),
    (
        fact("args.gb_amount", "float", ("refuel_data",), "the data to refuel, in GB"),
        _gb_amount,
    ),
)

_FACTS: FactTable[_Ctx] = FactTable(_TABLE)
FACTS = _FACTS.facts
"""Every telecom fact by name."""
facts_for = _FACTS.facts_for


def compute_facts(
    tool: str,
    args: Mapping[str, Any],
    state: Tables,
    now: datetime | None = None,
    names: Sequence[str] | None = None,
) -> dict[str, Value]:
    """The facts of one call (``names`` only, or all of the tool's), ``None`` where
    undecidable."""
    ctx = _Ctx(tool, args, state, now)
    return _FACTS.compute(tool, ctx, names)
