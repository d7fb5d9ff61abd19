"""A small airline database of ours, shaped like τ²-bench's records (no τ²-bench data)."""

from __future__ import annotations

import copy
from typing import Any

from tau2gate import DictState


def _flight(number: str, origin: str, dest: str, dates: dict[str, str]) -> dict[str, Any]:
    return {
        "flight_number": number,
        "origin": origin,
        "destination": dest,
        "dates": {day: {"status": status} for day, status in dates.items()},
    }


def _reservation(rid: str, user: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "reservation_id": rid,
        "user_id": user,
        "origin": "AAA",
        "destination": "BBB",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": "T100", "date": "2030-01-10", "price": 100}],
        "passengers": [{"first_name": "A", "last_name": "B", "dob": "1990-01-01"}],
        "payment_history": [{"payment_id": "credit_card_1", "amount": 100}],
        "created_at": "2030-01-01T09:00:00",
        "total_baggages": 1,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    base.update(fields)
    return base


NOW = "2030-01-05T12:00:00"

DB: dict[str, Any] = {
    "flights": {
        "T100": _flight(
            "T100",
            "AAA",
            "BBB",
            {"2030-01-02": "landed", "2030-01-10": "available", "2030-01-11": "cancelled"},
        ),
        "T200": _flight("T200", "BBB", "AAA", {"2030-01-12": "available", "2030-01-05": "flying"}),
        "T300": _flight("T300", "AAA", "CCC", {"2030-01-10": "available"}),
        "T400": _flight("T400", "CCC", "BBB", {"2030-01-10": "delayed"}),
    },
    "users": {
        "ann_1": {
            "user_id": "ann_1",
            "membership": "regular",
            "payment_methods": {
                "credit_card_1": {"source": "credit_card", "id": "credit_card_1"},
                "credit_card_2": {"source": "credit_card", "id": "credit_card_2"},
                "gift_card_1": {"source": "gift_card", "id": "gift_card_1", "amount": 50},
                "certificate_1": {"source": "certificate", "id": "certificate_1", "amount": 50},
                "certificate_2": {"source": "certificate", "id": "certificate_2", "amount": 50},
            },
            "reservations": ["OLD001", "NEW001", "CXL001", "BASIC1"],
        },
        "bo_2": {
            "user_id": "bo_2",
            "membership": "gold",
            "payment_methods": {"gift_card_9": {"source": "gift_card", "id": "gift_card_9"}},
            "reservations": ["BIZ001", "INS001", "RT0001", "FLOWN1"],
        },
        "cy_3": {
            "user_id": "cy_3",
            "membership": "regular",
            "payment_methods": {},
            "reservations": ["INS002"],
        },
    },
    "reservations": {
        "OLD001": _reservation("OLD001", "ann_1"),
        "NEW001": _reservation("NEW001", "ann_1", created_at="2030-01-04T13:00:00"),
        "CXL001": _reservation(
            "CXL001",
            "ann_1",
            flights=[{"flight_number": "T100", "date": "2030-01-11", "price": 100}],
        ),
        "FLOWN1": _reservation(
            "FLOWN1",
            "bo_2",
            cabin="business",
            flights=[{"flight_number": "T100", "date": "2030-01-02", "price": 100}],
        ),
        "BASIC1": _reservation("BASIC1", "ann_1", cabin="basic_economy"),
        "BIZ001": _reservation("BIZ001", "bo_2", cabin="business"),
        "INS001": _reservation("INS001", "bo_2", insurance="yes"),
        "RT0001": _reservation(
            "RT0001",
            "bo_2",
            flight_type="round_trip",
            flights=[
                {"flight_number": "T100", "date": "2030-01-10", "price": 100},
                {"flight_number": "T200", "date": "2030-01-12", "price": 100},
            ],
            total_baggages=3,
            nonfree_baggages=1,
        ),
        "INS002": _reservation("INS002", "cy_3", insurance="yes"),
    },
}


def state(db: dict[str, Any] | None = None) -> DictState:
    """A fresh :class:`DictState` over a copy of the fixture database."""
    return DictState(copy.deepcopy(DB if db is None else db))
