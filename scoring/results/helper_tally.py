"""A cell's helpers line counted one record at a time (:class:`HelperTally`): a caller that
scores each record as it is read and drops it (``ladder score``'s workers, #50) keeps
counts, not records, for :func:`scoring.results.gate_report.helper_lines`' lines."""

from __future__ import annotations

from protocol.records import CellKey, EpisodeRecord
from scoring.results.gate_report import ActivityCounts, CompileCounts, MatcherCounts
from scoring.results.lines import HelperLine

__all__ = ["HelperTally"]


class _Cell:
    """One cell's counts behind its helpers line: its completed records' (the gate's
    activity from its first record that compiled or ran the matcher on: where none did,
    the cell has no line)."""

    __slots__ = ("activity", "compiles", "matcher")

    def __init__(self) -> None:
        self.compiles, self.matcher = CompileCounts(), MatcherCounts()
        self.activity: ActivityCounts | None = None


class HelperTally:
    """:func:`helper_lines` of records added one at a time, kept as counts (a caller that
    scores a record and drops it need not keep it for its helpers line, #50): for each cell,
    :meth:`lines` is ``helper_lines`` of the cell's records added, in the order added,
    where :attr:`complete`. The gate's activity is counted from a cell's first completed
    record, where that one compiled or ran the matcher (a gate cell's first does; a cell
    where none does has no line and its activity is never counted): a cell whose line
    begins at a later record lacks its earlier records' activity, and the tally is then
    not complete (the caller counts the records again, with :func:`helper_lines`)."""

    __slots__ = ("_cells", "complete")

    def __init__(self) -> None:
        self._cells: dict[CellKey, _Cell] = {}
        self.complete = True

    def add(self, r: EpisodeRecord) -> None:
        cell = self._cells.get(r.cell)
        if cell is None:
            cell = self._cells[r.cell] = _Cell()
        if r.termination != "completed":
            return
        before = cell.matcher.turns
        cell.compiles.add(r)
        cell.matcher.add(r)
        if cell.activity is None:
            if r.compile is None and cell.matcher.turns == before:
                return  # no line yet
            self.complete = self.complete and cell.matcher.episodes == 1
            cell.activity = ActivityCounts()
        cell.activity.add(r)

    def cells(self) -> list[CellKey]:
        """Every cell of the records added, in the order of their first record."""
        return list(self._cells)

    def lines(self, key: CellKey) -> list[HelperLine]:
        """The cell's helpers line (none where its episodes neither compiled nor ran the
        matcher)."""
        cell = self._cells.get(key)
        if cell is None or cell.activity is None:
            return []
        compiled, matcher = cell.compiles.summary(), cell.matcher.summary()
        return [
            HelperLine(cell=key, compile=compiled, matcher=matcher, gate=cell.activity.summary())
        ]
