"""The fact vocabulary the retail deny rules are written over (pure, no I/O).

The database is read through :class:`tau2gate.domain.Tables`: tables ``orders``, ``users``
and ``products``, rows shaped like τ²-bench's retail records (an order's ``user_id``,
``status``, ``items`` with ``item_id`` / ``product_id`` / ``price``, ``payment_history``; a
user's ``payment_methods`` by id with ``source`` and, for a gift card, ``balance``; a
product's ``variants`` by item id with ``available`` and ``price``).

The call's user is the order's owner (order tools) or the call's ``user_id``
(``modify_user_address``): payment methods are looked up in that user's profile, as the
tools themselves do. A new item is looked up among the variants of the product of the item
it replaces (position by position, as the tools pair ``item_ids`` with ``new_item_ids``). A
fact the state cannot decide (unknown order, an item id not in the order, counts that do not
pair) is ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from tau2gate.domain import FactSpec, FactTable, Tables, Value, fact, row_of

__all__ = ["FACTS", "WRITE_TOOLS", "compute_facts", "facts_for"]

WRITE_TOOLS: tuple[str, ...] = (
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_user_address",
    "return_delivered_order_items",
)
"""The seven WRITE tools of τ²-bench's retail domain (the gate's scope)."""

_ORDER = (
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "return_delivered_order_items",
)
_SWAP = ("exchange_delivered_order_items", "modify_pending_order_items")
_ITEMS = (*_SWAP, "return_delivered_order_items")
_PAY = (*_ITEMS, "modify_pending_order_payment")


def _seq(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list | tuple) else ()


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


class _Ctx:
    """What one call's facts are computed from (looked up once per call)."""

    def __init__(self, tool: str, args: Mapping[str, Any], state: Tables) -> None:
        self.tool = tool
        self.args = args
        self.state = state
        oid = args.get("order_id")
        self.order = state.row("orders", oid) if tool in _ORDER and isinstance(oid, str) else None
        uid = args.get("user_id") if tool == "modify_user_address" else None
        if uid is None and self.order is not None:
            uid = self.order.get("user_id")
        self.user = state.row("users", uid) if isinstance(uid, str) else None

    def order_items(self) -> list[Mapping[str, Any]] | None:
        if self.order is None:
            return None
        return [i for i in _seq(self.order.get("items")) if isinstance(i, Mapping)]

    def item_ids(self, name: str) -> list[str] | None:
        value = self.args.get(name)
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            return None
        return list(value)

    def pairs(self) -> list[tuple[Mapping[str, Any], str]] | None:
        """``(order item, new item id)`` position by position; ``None`` when undecidable."""
        items, old, new = (
            self.order_items(),
            self.item_ids("item_ids"),
            self.item_ids("new_item_ids"),
        )
        if items is None or old is None or new is None or len(old) != len(new):
            return None
        out = []
        for old_id, new_id in zip(old, new, strict=True):
            item = next((i for i in items if i.get("item_id") == old_id), None)
            if item is None:
                return None
            out.append((item, new_id))
        return out

    def variant(self, item: Mapping[str, Any], new_id: str) -> Mapping[str, Any] | None:
        pid = item.get("product_id")
        product = self.state.row("products", pid) if isinstance(pid, str) else None
        return None if product is None else row_of(product.get("variants"), new_id)

    def payment(self) -> Mapping[str, Any] | None:
        pid = self.args.get("payment_method_id")
        return None if self.user is None else row_of(self.user.get("payment_methods"), pid)

    def original_payment(self) -> Mapping[str, Any] | None:
        if self.order is None:
            return None
        history = [p for p in _seq(self.order.get("payment_history")) if isinstance(p, Mapping)]
        return next((p for p in history if p.get("transaction_type") == "payment"), None)


def _order_status(ctx: _Ctx) -> Value:
    value = None if ctx.order is None else ctx.order.get("status")
    return value if isinstance(value, str) else None


def _order_item_count(ctx: _Ctx) -> Value:
    items = ctx.order_items()
    return None if items is None else len(items)


def _original_payment_source(ctx: _Ctx) -> Value:
    first = ctx.original_payment()
    if first is None or ctx.user is None:
        return None
    method = row_of(ctx.user.get("payment_methods"), first.get("payment_method_id"))
    source = None if method is None else method.get("source")
    return source if isinstance(source, str) else None


def _original_payment_amount(ctx: _Ctx) -> Value:
    first = ctx.original_payment()
    return None if first is None else _number(first.get("amount"))


def _user_known(ctx: _Ctx) -> Value:
    return ctx.user is not None


def _reason(ctx: _Ctx) -> Value:
    value = ctx.args.get("reason")
    return value if isinstance(value, str) else None


def _count(name: str) -> Callable[[_Ctx], Value]:
    def get(ctx: _Ctx) -> Value:
        ids = ctx.item_ids(name)
        return None if ids is None else len(ids)

    return get


def _items_in_order(ctx: _Ctx) -> Value:
    items, ids = ctx.order_items(), ctx.item_ids("item_ids")
    if items is None or ids is None:
        return None
    held = [i.get("item_id") for i in items]
    return all(ids.count(i) <= held.count(i) for i in set(ids))


def _all_pairs(pred: Callable[[_Ctx, Mapping[str, Any], str], bool]) -> Callable[[_Ctx], Value]:
    def get(ctx: _Ctx) -> Value:
        pairs = ctx.pairs()
        return None if pairs is None else all(pred(ctx, item, new) for item, new in pairs)

    return get


def _same_product(ctx: _Ctx, item: Mapping[str, Any], new_id: str) -> bool:
    return ctx.variant(item, new_id) is not None


def _available(ctx: _Ctx, item: Mapping[str, Any], new_id: str) -> bool:
    variant = ctx.variant(item, new_id)
    return variant is not None and variant.get("available") is True


def _differ(ctx: _Ctx, item: Mapping[str, Any], new_id: str) -> bool:
    return item.get("item_id") != new_id


def _price_difference(ctx: _Ctx) -> Value:
    pairs = ctx.pairs()
    if pairs is None:
        return None
    total = 0.0
    for item, new_id in pairs:
        variant = ctx.variant(item, new_id)
        new, old = (
            _number(None if variant is None else variant.get("price")),
            _number(item.get("price")),
        )
        if new is None or old is None:
            return None
        total += new - old
    return round(total, 2)


def _payment_in_profile(ctx: _Ctx) -> Value:
    return None if ctx.user is None else ctx.payment() is not None


def _payment_source(ctx: _Ctx) -> Value:
    method = ctx.payment()
    source = None if method is None else method.get("source")
    return source if isinstance(source, str) else None


def _payment_balance(ctx: _Ctx) -> Value:
    method = ctx.payment()
    if method is None or method.get("source") != "gift_card":
        return None
    return _number(method.get("balance"))


def _payment_is_original(ctx: _Ctx) -> Value:
    first = ctx.original_payment()
    pid = ctx.args.get("payment_method_id")
    if first is None or not isinstance(pid, str):
        return None
    return pid == first.get("payment_method_id")


_TABLE: tuple[tuple[FactSpec, Callable[[_Ctx], Value]], ...] = (
    (
        fact(
            "order.status",
            "str",
            _ORDER,
            "'pending', 'pending (item modified)', 'processed', 'delivered', 'cancelled', "
            "'exchange requested' or 'return requested'",
        ),
        _order_status,
    ),
    (fact("order.item_count", "int", _ORDER, "items in the order"), _order_item_count),
    (
        fact(
            "order.original_payment_source",
            "str",
            _ORDER,
            "source of the order's first payment: credit_card, paypal or gift_card",
        ),
        _original_payment_source,
    ),
    (
        fact(
            "order.original_payment_amount",
            "float",
            _ORDER,
            "amount of the order's first payment (the order total)",
        ),
        _original_payment_amount,
    ),
    (
        fact("user.known", "bool", ("modify_user_address",), "the call's user_id is a user"),
        _user_known,
    ),
    (
        fact("args.reason", "str", ("cancel_pending_order",), "the cancellation reason given"),
        _reason,
    ),
    (fact("args.item_count", "int", _ITEMS, "item ids in the call"), _count("item_ids")),
    (
        fact("args.new_item_count", "int", _SWAP, "new item ids in the call"),
        _count("new_item_ids"),
    ),
    (
        fact(
            "args.items_in_order",
            "bool",
            _ITEMS,
            "every item id of the call is in the order (as many times as listed)",
        ),
        _items_in_order,
    ),
    (
        fact(
            "args.new_items_same_product",
            "bool",
            _SWAP,
            "each new item is a variant of the same product as the item it replaces",
        ),
        _all_pairs(_same_product),
    ),
    (
        fact(
            "args.new_items_available",
            "bool",
            _SWAP,
            "each new item is an available variant of the replaced item's product",
        ),
        _all_pairs(_available),
    ),
    (
        fact(
            "args.new_items_differ",
            "bool",
            _SWAP,
            "no new item id equals the item id it replaces (a different option)",
        ),
        _all_pairs(_differ),
    ),
    (
        fact(
            "args.price_difference",
            "float",
            _SWAP,
            "sum of new item prices minus replaced item prices (positive: the user pays)",
        ),
        _price_difference,
    ),
    (
        fact(
            "args.payment_in_profile",
            "bool",
            _PAY,
            "payment_method_id is one of the order owner's payment methods",
        ),
        _payment_in_profile,
    ),
    (
        fact(
            "args.payment_source",
            "str",
            _PAY,
            "source of payment_method_id in the profile: credit_card, paypal or gift_card",
        ),
        _payment_source,
    ),
    (
        fact(
            "args.payment_balance",
            "float",
            _PAY,
            "the balance of payment_method_id when it is a gift card (else unknown)",
        ),
        _payment_balance,
    ),
    (
        fact(
            "args.payment_is_original",
            "bool",
            _PAY,
            "payment_method_id is the method of the order's first payment",
        ),
        _payment_is_original,
    ),
)

_FACTS: FactTable[_Ctx] = FactTable(_TABLE)
FACTS = _FACTS.facts
"""Every retail fact by name."""
facts_for = _FACTS.facts_for


def compute_facts(
    tool: str,
    args: Mapping[str, Any],
    state: Tables,
    now: datetime | None = None,
    names: Sequence[str] | None = None,
) -> dict[str, Value]:
    """The facts of one call (``names`` only, or all of the tool's), ``None`` where
    undecidable; ``now`` is unused (no retail fact reads the time)."""
    ctx = _Ctx(tool, args, state)
    return _FACTS.compute(tool, ctx, names)
