"""The streaming scorer: results as cells and ladders complete.

Fed finished episodes one at a time (in any order), :class:`StreamingScorer` scores each one
(regenerated episodes cached by spec) and returns the result lines that became final:

* a cell line (``type: "cell"``) the moment the cell holds a record for every expected seed
  (and trial, ``--trials``);
  infrastructure-error records count as finished for completeness (they are reported, never
  successes);
* the adjacent contrast lines of a configuration the moment every expected cell of that
  configuration is complete, with Holm over that ladder's contrasts of each scoring (the
  offline ``ladder score`` adjusts over all contrasts of a scoring instead).

A later record for the same (cell, seed, trial) replaces the earlier one; when it lands in a cell
that was already complete, the cell line (and, when its ladder is complete, the ladder's
contrasts) is emitted again with the new numbers: a reader keeps the last line per cell and
per contrast. Records of cells that are not expected are scored and kept but never complete.
Cell lines equal :func:`scoring.results.cells.cell_line` over the same records. Scores are kept
without their per-turn detail (``detail=False``) and their parts shared
(:class:`scoring.results.compact.Shared`: one cell key per cell, one object per distinct
scoring), so a long run or a resume's records read back stay small (#47).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from protocol.episode.structs import Episode
from protocol.episode.versions import SpecError
from protocol.records import CellKey, EpisodeRecord
from scoring.replay.episode_score import EpisodeScore, score_episode
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import cell_line, config_of, ladder_contrasts
from scoring.results.compact import Shared
from scoring.results.families import apply_families
from scoring.results.lines import ResultLine
from scoring.results.trials import Unit

__all__ = ["StreamingScorer"]


class StreamingScorer:
    """``expected``: each cell's seeds, each run ``trials`` times (trials 0..trials-1)."""

    def __init__(
        self,
        expected: Mapping[CellKey, Collection[int]],
        cache: EpisodeCache | None = None,
        *,
        trials: int = 1,
    ) -> None:
        self.expected: dict[CellKey, frozenset[Unit]] = {
            k: frozenset((s, t) for s in v for t in range(trials)) for k, v in expected.items()
        }
        self.cache = cache if cache is not None else EpisodeCache()
        self.scores: dict[CellKey, dict[Unit, EpisodeScore]] = {}
        self.shared = Shared()  # the parts the kept scores share (#47)
        self._ladders: dict[CellKey, list[CellKey]] = {}
        for key in self.expected:
            self._ladders.setdefault(config_of(key), []).append(key)

    def score(self, record: EpisodeRecord, episode: Episode | None = None) -> EpisodeScore:
        """``record`` scored on ``episode`` (see :meth:`add`), else on its spec's episode
        from the cache."""
        if episode is None:
            try:
                episode = self.cache.get(record.spec)
            except SpecError:
                return self.shared(score_episode(record))  # reports the spec as unscorable
        return self.shared(score_episode(record, episode, detail=False))

    def _complete(self, key: CellKey) -> bool:
        seeds = self.expected.get(key)
        return seeds is not None and seeds <= self.scores.get(key, {}).keys()

    def add(self, record: EpisodeRecord, episode: Episode | None = None) -> list[ResultLine]:
        """Score *record*; the result lines that became final with it (often none).
        ``episode``: the episode of ``record.spec`` exactly as :attr:`cache` would give it
        (the runner's own, handed on so it is not generated a second time, #50); None: from
        the cache."""
        key = record.cell
        score = self.score(record, episode)
        self.scores.setdefault(key, {})[score.unit] = score
        if not self._complete(key):
            return []
        lines: list[ResultLine] = [cell_line(key, self.scores[key].values())]
        config = config_of(key)
        ladder = self._ladders[config]
        if all(self._complete(k) for k in ladder):
            contrasts = ladder_contrasts({k: self.scores[k] for k in ladder})
            apply_families(contrasts)  # within this ladder only (its own contrasts)
            lines.extend(contrasts)
        return lines

    def complete_cells(self) -> list[CellKey]:
        return [k for k in self.expected if self._complete(k)]
