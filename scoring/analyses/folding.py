"""Every analysis's parts of a batch made one pair at a time (:class:`Folding`, pure).

Where every report table declares its compute as a :class:`~scoring.analyses.base.Fold`, a
caller that has each (record, score) pair once, in the batch's order (``ladder report``'s
workers, reading a log line by line: #50, tenth round), adds each pair as it comes and keeps
only the folds' values; :meth:`Folding.parts` is then, cell by cell, what
:func:`scoring.analyses.registry.batch_parts` makes of that cell's pairs.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from protocol.records import CellKey
from scoring.analyses.base import Analysis, Fold, Pair, Table
from scoring.analyses.registry import ANALYSES, Parts
from scoring.replay.ground_truth import EpisodeCache

__all__ = ["Folding", "folds_of"]


def folds_of(analyses: Sequence[Table] | None = None) -> dict[str, Fold[object, object]] | None:
    """Each analysis's fold, by name, in the analyses' order (every registered one by
    default); None where an analysis's compute is not a :class:`Fold` (its batch must then
    be kept whole)."""
    tables = ANALYSES.entries() if analyses is None else analyses
    out: dict[str, Fold[object, object]] = {}
    for t in tables:
        if not (isinstance(t, Analysis) and isinstance(t.compute, Fold)):
            return None
        out[t.name] = t.compute
    return out


class Folding:
    """Each analysis's values of one batch's pairs, added one at a time, per cell in the
    order of its first pair: :meth:`parts` of a cell is :func:`batch_parts` of the cell's
    pairs (trial 0 of each seed, one fold's values however many analyses read them; the
    analyses named in ``skip`` get none), ``folds`` from :func:`folds_of`."""

    __slots__ = ("_cache", "_cells", "_folds", "_names")

    def __init__(
        self,
        folds: dict[str, Fold[object, object]],
        cache: EpisodeCache,
        skip: Collection[str] = (),
    ) -> None:
        distinct: list[Fold[object, object]] = []  # one fold's values however many read them
        index: dict[int, int] = {}
        self._names: list[tuple[str, int | None]] = []  # each analysis's fold, None: skipped
        for name, f in folds.items():
            if name in skip:
                self._names.append((name, None))
                continue
            if id(f) not in index:
                index[id(f)] = len(distinct)
                distinct.append(f)
            self._names.append((name, index[id(f)]))
        self._folds = list(enumerate(distinct))
        self._cells: dict[CellKey, list[list[object]]] = {}
        self._cache = cache

    def add(self, pair: Pair) -> None:
        """One pair, in the batch's order (every trial's: only trial 0's are folded)."""
        cell = pair[0].cell
        values = self._cells.get(cell)
        if values is None:
            values = self._cells[cell] = [[] for _ in self._folds]
        if pair[0].trial != 0:
            return
        cache = self._cache
        for i, f in self._folds:
            v = f.each(pair, cache)
            if v is not None:
                values[i].append(v)

    def cells(self) -> list[CellKey]:
        """The cells of the pairs added, in the order of their first pair."""
        return list(self._cells)

    def parts(self, cell: CellKey) -> Parts:
        """What each analysis makes of the cell's pairs (``batch_parts``'s parts)."""
        values = self._cells[cell]
        wholes = {i: list(f.whole(values[i])) for i, f in self._folds}
        return {name: [] if i is None else wholes[i] for name, i in self._names}
