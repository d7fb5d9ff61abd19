"""A ``ladder report`` worker's analyses of one batch of log files, made record by record
(:class:`Folded`): where every report table's compute is a
:class:`~scoring.analyses.base.Fold`, each record is folded into the tables' values as it is
read and scored, and dropped with its per-turn detail before the next line is decoded, as
``ladder score``'s workers drop theirs (#50, tenth round: ``runner.rundir.rescore_part``).
Per cell, in the order of its first record: its first key, what each analysis makes of its
pairs (the parts :func:`scoring.analyses.registry.batch_parts` makes of them) and its replies
cut at their budget, the same as the batch read whole gives.
"""

from __future__ import annotations

from protocol.records import CellKey, EpisodeRecord, log_key
from scoring.analyses.folding import Folding, folds_of
from scoring.analyses.registry import STRESS_ONLY, Parts, stress_free
from scoring.analyses.truncation import Cut, add_cuts
from scoring.replay.episode_score import EpisodeScore
from scoring.replay.ground_truth import EpisodeCache

__all__ = ["Folded"]


class Folded:
    """One batch's analyses, record by record. ``plain`` (no file of the group is named for
    a stressed cell): the :data:`STRESS_ONLY` analyses are left out, as the batch read whole
    leaves them out where its every cell is stress free; a stressed cell's record then
    spoils the batch (:attr:`spoiled`: the caller reads it whole)."""

    __slots__ = ("_cells", "_folding", "_plain", "spoiled")

    def __init__(self, folding: Folding, plain: bool) -> None:
        self._folding = folding
        self._plain = plain
        self._cells: dict[CellKey, tuple[tuple[str, int], list[dict[str, tuple[int, int]]]]] = {}
        self.spoiled = False

    @classmethod
    def start(cls, cache: EpisodeCache, plain: bool) -> Folded | None:
        """A batch's, where every registered analysis declares a fold (else None: the
        batch is read whole, as before)."""
        folds = folds_of()
        if folds is None:
            return None
        return cls(Folding(folds, cache, STRESS_ONLY if plain else ()), plain)

    def add(self, record: EpisodeRecord, score: EpisodeScore) -> None:
        """One record and its score with per-turn detail, in reading order."""
        if self.spoiled:
            return
        cell = record.cell
        seen = self._cells.get(cell)
        if seen is None:
            if self._plain and not stress_free(cell):
                self.spoiled = True
                return
            seen = self._cells[cell] = (log_key(record), [])
        seen[1].append(score.cut)
        self._folding.add((record, score))

    def detail(self) -> tuple[list[tuple[tuple[str, int], CellKey, Parts, Cut]], list[CellKey]]:
        """Per cell, in the order of its first record: its first key, its analyses' parts,
        its replies cut at their budget; and the cells whose :data:`STRESS_ONLY` parts
        were left out (every cell, where ``plain``)."""
        out = [
            (key, cell, self._folding.parts(cell), add_cuts(cuts))
            for cell, (key, cuts) in self._cells.items()
        ]
        return out, list(self._cells) if self._plain else []
