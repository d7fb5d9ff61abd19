"""Per-cell sums of what a :class:`~scoring.analyses.base.Fold`'s episodes give (pure).

A table whose lines count episodes gives each episode's tallies as one tuple of ints (bools
count as 0 or 1) beside its cell; its batch's lines sum them per cell, position by
position, into ints (a bool never reaches a line: its JSON is a number).
"""

from __future__ import annotations

from collections.abc import Iterable

from protocol.records import CellKey

__all__ = ["Tallied", "by_cell_sums"]

Tallied = tuple[CellKey, tuple[int, ...]]  # one episode's cell and its tallies


def by_cell_sums(episodes: Iterable[Tallied]) -> dict[CellKey, tuple[int, ...]]:
    """Each cell's tallies summed over its episodes (each of one cell's as long), the cells
    in their first episode's order."""
    rows: dict[CellKey, list[tuple[int, ...]]] = {}
    last: CellKey | None = None
    mine: list[tuple[int, ...]] = []
    for cell, tallies in episodes:
        if cell != last:  # a batch is mostly one cell's: its list looked up once per run
            last = cell
            mine = rows.setdefault(cell, [])
        mine.append(tallies)
    return {cell: tuple(map(sum, zip(*r, strict=True))) for cell, r in rows.items()}
