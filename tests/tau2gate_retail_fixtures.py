"""A small retail database of ours, shaped like τ²-bench's retail records (no τ²-bench data)."""

from __future__ import annotations

import copy
from typing import Any

from tau2gate import DictState


def _variant(item_id: str, price: float, available: bool = True) -> dict[str, Any]:
    return {"item_id": item_id, "options": {"o": item_id}, "available": available, "price": price}


def _item(item_id: str, product_id: str, price: float) -> dict[str, Any]:
    return {"name": product_id, "product_id": product_id, "item_id": item_id, "price": price}


def _order(oid: str, user: str, status: str, items: list[Any], pays: list[Any]) -> dict[str, Any]:
    return {
        "order_id": oid,
        "user_id": user,
        "status": status,
        "items": items,
        "fulfillments": [],
        "payment_history": [
            {"transaction_type": kind, "amount": amount, "payment_method_id": method}
            for kind, amount, method in pays
        ],
    }


SHIRT_BLUE = _item("1001", "P1", 20.0)
SHOE = _item("2001", "P2", 50.0)

DB: dict[str, Any] = {
    "products": {
        "P1": {
            "product_id": "P1",
            "name": "shirt",
            "variants": {
                "1001": _variant("1001", 20.0),
                "1002": _variant("1002", 25.0),
                "1003": _variant("1003", 30.0, available=False),
                "1004": _variant("1004", 100.0),
            },
        },
        "P2": {
            "product_id": "P2",
            "name": "shoe",
            "variants": {"2001": _variant("2001", 50.0), "2002": _variant("2002", 60.0)},
        },
    },
    "users": {
        "ann_1": {
            "user_id": "ann_1",
            "payment_methods": {
                "credit_card_1": {"source": "credit_card", "id": "credit_card_1"},
                "paypal_1": {"source": "paypal", "id": "paypal_1"},
                "gift_card_1": {"source": "gift_card", "id": "gift_card_1", "balance": 50.0},
            },
            "orders": ["#W0000001", "#W0000002", "#W0000003", "#W0000004", "#W0000005"],
        },
        "bo_2": {
            "user_id": "bo_2",
            "payment_methods": {
                "gift_card_9": {"source": "gift_card", "id": "gift_card_9", "balance": 500.0}
            },
            "orders": ["#W0000006"],
        },
    },
    "orders": {
        "#W0000001": _order(
            "#W0000001",
            "ann_1",
            "pending",
            [SHIRT_BLUE, SHOE],
            [("payment", 70.0, "credit_card_1")],
        ),
        "#W0000002": _order(
            "#W0000002",
            "ann_1",
            "delivered",
            [SHIRT_BLUE, SHIRT_BLUE],
            [("payment", 40.0, "paypal_1")],
        ),
        "#W0000003": _order(
            "#W0000003",
            "ann_1",
            "pending (item modified)",
            [_item("1002", "P1", 25.0)],
            [("payment", 20.0, "credit_card_1"), ("payment", 5.0, "credit_card_1")],
        ),
        "#W0000004": _order(
            "#W0000004", "ann_1", "processed", [SHOE], [("payment", 50.0, "credit_card_1")]
        ),
        "#W0000005": _order(
            "#W0000005", "ann_1", "cancelled", [SHOE], [("payment", 50.0, "gift_card_1")]
        ),
        "#W0000006": _order(
            "#W0000006", "bo_2", "delivered", [SHOE], [("payment", 50.0, "gift_card_9")]
        ),
    },
}


def state(db: dict[str, Any] | None = None) -> DictState:
    """A fresh :class:`DictState` over a copy of the retail fixture database."""
    return DictState(copy.deepcopy(DB if db is None else db))
