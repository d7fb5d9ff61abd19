"""What a :class:`~scoring.analyses.base.Fold`'s episodes give, by cell (pure).

Each table's ``each`` gives a tuple whose first item is the episode's cell;
:func:`cell_groups` groups a batch's values by it, in the cells' first-seen order. A table
whose lines count episodes gives the episode's tallies as one tuple of ints (bools count as
0 or 1) beside its cell; :func:`by_cell_sums` sums them per cell, position by position,
into ints (a bool never reaches a line: its JSON is a number).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from protocol.records import CellKey

__all__ = ["Tallied", "by_cell_sums", "cell_groups"]

Tallied = tuple[CellKey, tuple[int, ...]]  # one episode's cell and its tallies
V = TypeVar("V", bound=tuple[CellKey, *tuple[object, ...]])  # a value: its cell first


def cell_groups(values: Iterable[V]) -> dict[CellKey, list[V]]:
    """``values`` by their cell (each value's first item), in order, the cells in their
    first value's order (keyed by that value's cell)."""
    groups: dict[CellKey, list[V]] = {}
    last: CellKey | None = None
    mine: list[V] = []
    for v in values:
        cell = v[0]
        if cell != last:  # a batch is mostly one cell's: its list looked up once per run
            last = cell
            mine = groups.setdefault(cell, [])
        mine.append(v)
    return groups


def by_cell_sums(episodes: Iterable[Tallied]) -> dict[CellKey, tuple[int, ...]]:
    """Each cell's tallies summed over its episodes (each of one cell's as long), the cells
    in their first episode's order."""
    return {
        cell: tuple(map(sum, zip(*(tallies for _, tallies in rows), strict=True)))
        for cell, rows in cell_groups(episodes).items()
    }
