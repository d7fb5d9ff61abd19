"""What a long run keeps per scored episode: a compact score whose parts are shared (#47).

A compact score (``detail=False``: no per-turn detail) of a record read back from a log holds
its own copy of everything decoded from that line: the cell key with its knobs (about 3 KB),
two scorings with their channel and label counts, the termination, the cut replies. Scored
during the run, the cell key is the task's, but the scorings are the episode's own. Across a
cell these repeat (one cell key, a few distinct scorings: the perfect agent's are all the
same), so :class:`Shared` hands every compact score its parts from a table of the values seen:
what a score keeps of its own is the struct itself, its seed and its trial (a few hundred
bytes), for records scored in the run and records read back alike.

The values are equal, only their objects are shared: the result lines (which read the counts
and never change them) are byte for byte those of unshared scores. Each table holds at most
``maxsize`` values; past that, a new value is kept as it came (never dropped, never wrong).
Cell keys are never capped: one per cell of the records scored (a grid's cells), each held by
its scores anyway, so the table adds a slot per cell, and a grid of many cells read back
still keeps one key per cell.
A score with per-turn detail is returned unchanged.
"""

from __future__ import annotations

import sys
from collections.abc import Hashable
from typing import TypeVar

import msgspec

from protocol.records import CellKey
from scoring.replay.askback import Burden
from scoring.replay.episode_score import EpisodeScore, Scoring

__all__ = ["Shared"]

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


class Shared:
    """The table of shared parts of compact scores; calling it returns the score with its
    parts taken from the table (``maxsize`` values per kind of part)."""

    def __init__(self, maxsize: int = 4096) -> None:
        self.maxsize = maxsize
        self._cells: dict[CellKey, CellKey] = {}
        self._scorings: dict[bytes, Scoring] = {}
        self._cuts: dict[tuple[tuple[str, tuple[int, int]], ...], dict[str, tuple[int, int]]] = {}
        self._burdens: dict[Burden, Burden] = {}

    def __len__(self) -> int:
        return len(self._cells) + len(self._scorings) + len(self._cuts) + len(self._burdens)

    def __call__(self, score: EpisodeScore) -> EpisodeScore:
        if score.primary.turns or score.decline_aware.turns:
            return score  # per-turn detail: the caller's to keep
        return msgspec.structs.replace(
            score,
            cell=self._cells.setdefault(score.cell, score.cell),
            termination=sys.intern(score.termination),
            primary=self._scoring(score.primary),
            decline_aware=self._scoring(score.decline_aware),
            burden=None
            if score.burden is None
            else self._one(self._burdens, score.burden, score.burden),
            cut=self._one(self._cuts, tuple(score.cut.items()), score.cut),
        )

    def _scoring(self, scoring: Scoring) -> Scoring:
        # the encoding keeps the counts' order: equal bytes, equal lines
        return self._one(self._scorings, msgspec.msgpack.encode(scoring), scoring)

    def _one(self, table: dict[_K, _V], key: _K, value: _V) -> _V:
        """The table's value for ``key`` (``value`` the first time)."""
        seen = table.get(key)
        if seen is not None:
            return seen
        if len(table) < self.maxsize:
            table[key] = value
        return value
