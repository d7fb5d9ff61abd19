"""The live τ²-bench airline database as a :class:`tau2gate.facts.AirlineState`.

Records are dumped one at a time as the facts ask for them (the database is read at call
time, so a database swapped by τ²-bench's ``set_state`` is the one read).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["LiveState"]


class LiveState:
    """Read-only look-ups into a τ²-bench ``FlightDB`` (``db()`` returns the current one)."""

    def __init__(self, db: Callable[[], Any]) -> None:
        self._db = db

    def _row(self, table: str, key: str) -> Mapping[str, Any] | None:
        row = getattr(self._db(), table, {}).get(key)
        return None if row is None else dict(row.model_dump(mode="json"))

    def reservation(self, reservation_id: str) -> Mapping[str, Any] | None:
        return self._row("reservations", reservation_id)

    def user(self, user_id: str) -> Mapping[str, Any] | None:
        return self._row("users", user_id)

    def flight(self, flight_number: str) -> Mapping[str, Any] | None:
        return self._row("flights", flight_number)
