"""A live τ²-bench database as a :class:`tau2gate.domain.Tables`.

Records are dumped one at a time as the facts ask for them (the database is read at call
time, so a database swapped by τ²-bench's ``set_state`` is the one read). Any domain: the
table is an attribute of the database (``reservations``, ``orders``, ``products``, ...): a
dict by key, or a list whose rows carry the key in the field ``keys`` names for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["LiveState"]


class LiveState:
    """Read-only look-ups into a τ²-bench database (``db()`` returns the current one)."""

    def __init__(self, db: Callable[[], Any], keys: Mapping[str, str] | None = None) -> None:
        self._db = db
        self._keys = dict(keys or {})

    def row(self, table: str, key: str) -> Mapping[str, Any] | None:
        rows = getattr(self._db(), table, None)
        if table in self._keys and isinstance(rows, list):
            field = self._keys[table]
            row = next((r for r in rows if getattr(r, field, None) == key), None)
        else:
            row = rows.get(key) if isinstance(rows, dict) else None
        return None if row is None else dict(row.model_dump(mode="json"))
