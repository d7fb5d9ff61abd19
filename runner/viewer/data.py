"""What the viewer's pages and ``ladder show`` ask of a run: the index refreshed, then the
pure view builders of :mod:`scoring.display.episode_views` over the records it finds (the typed
views of :mod:`scoring.display.models`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import msgspec

from protocol.config import is_synthetic, model_label
from protocol.episode.versions import SpecError
from protocol.probe.history import system_prompt
from protocol.records import Episode, EpisodeRecord
from protocol.stress.budget import cell_episode
from runner.rundir.manifest import read_manifest
from runner.viewer.index import Progress, RunIndex
from scoring.analyses.truncation import CUT_WARN_SHARE
from scoring.display.episode_views import (
    arm_label,
    compare_view,
    episode_view,
    filter_rows,
    pairing_key,
)
from scoring.display.models import (
    CellsView,
    CompareView,
    EpisodesView,
    EpisodeView,
    IndexingView,
    LogView,
    PairView,
)
from scoring.display.run_overview import contrasts_view, costed_cells_view
from scoring.replay.episode_score import EpisodeScore, score_episode
from scoring.report.details import run_details
from scoring.report.markdown import synthetic_warning
from scoring.results.families import ConfigLines, score_lines
from scoring.results.lines import CellLine, ResultLine

__all__ = ["RunView"]


class RunView:
    """A run directory read for the viewer (one per served directory). ``background``: a
    large refresh runs in the background (:meth:`runner.viewer.index.RunIndex.refresh`), the
    pages showing what is indexed so far (the viewer's app, #50)."""

    def __init__(self, run_dir: Path, *, background: bool = False) -> None:
        self.run_dir = run_dir
        # the overview's lines with the index: each configuration's kept while its scores
        # are the same (computed as the index fills, reused by the overview at the end)
        self._score_lines: Callable[[list[EpisodeScore]], list[ResultLine]] = partial(
            score_lines, memo=ConfigLines()
        )
        self.index = RunIndex(run_dir, self._score_lines)
        self.background = background
        self._partial: tuple[Progress, list[ResultLine]] | None = None

    def refresh(self) -> None:
        self.index.refresh(wait=not self.background)

    def _lines(self) -> tuple[list[ResultLine], IndexingView | None]:
        """The result lines of the indexed scores and, while the index is built in the
        background, how far it got (the lines then those of the episodes in so far, the
        contrasts with them: their p-values import nothing, #50, twelfth round)."""
        progress = self.index.progress()
        if progress is None:
            if self.index.overview is None:
                self.index.set_overview(self._score_lines(self.index.scores()))
            return self.index.overview or [], None
        if self._partial is None or self._partial[0] != progress:
            self._partial = progress, self._score_lines(self.index.scores())
        files, total, episodes = progress
        indexing = IndexingView(files=files, total=total, episodes=episodes)
        return self._partial[1], indexing

    def cells(self) -> CellsView:
        """The overview: cells with both scorings and CIs, channels, cost; the contrasts;
        what reading the logs found; how far a build in the background got."""
        self.refresh()
        lines, indexing = self._lines()
        rep = self.index.report()
        cells = costed_cells_view(lines, self.index.costs(), self.index.gates())
        warning = synthetic_warning(line.cell for line in lines if isinstance(line, CellLine))
        return CellsView(
            run=str(self.run_dir),
            synthetic=" ".join(x.removeprefix("> ") for x in warning).strip(),
            details=run_details(
                read_manifest(self.run_dir.parent if self.run_dir.name == "logs" else self.run_dir)
            ),
            cells=cells,
            contrasts=contrasts_view(lines, cells),
            log=LogView(
                files=rep.files,
                records=rep.records,
                corrupt=rep.corrupt[:20],
                duplicates=rep.duplicates,
            ),
            cut_threshold=CUT_WARN_SHARE,
            indexing=indexing,
        )

    def episodes(
        self,
        slug: str,
        *,
        failed: str | None = None,
        channel: str | None = None,
        seed: int | None = None,
        trial: int | None = None,
    ) -> EpisodesView | None:
        """One cell's episode rows, filtered (None for an unknown cell)."""
        self.refresh()
        key = self.index.cell_key(slug)
        if key is None:
            return None
        rows = [e.row for e in self.index.entries(slug)]
        kept = filter_rows(rows, failed=failed, channel=channel, seed=seed, trial=trial)
        return EpisodesView(
            slug=slug,
            arm=key.arm,
            total=len(rows),
            episodes=kept,
            label=model_label(key),
            synthetic=is_synthetic(key),
        )

    def _episode(self, record: EpisodeRecord) -> Episode | None:
        try:
            # the episode the cell ran: with the rules its knobs place (#48)
            return cell_episode(self.index.episodes.get(record.spec), record.cell.knobs)
        except SpecError:
            return None

    def episode(self, slug: str, seed: int, trial: int = 0) -> EpisodeView | None:
        """One episode turn by turn, and the other arms of its configuration that ran the
        seed's trial (for the side-by-side); None when not in the logs."""
        self.refresh()
        record = self.index.record(slug, seed, trial)
        entry = self.index.entry(slug, seed, trial)
        if record is None or entry is None:
            return None
        episode = self._episode(record)
        score = score_episode(record, episode) if episode else score_episode(record)
        view = episode_view(record, score, episode)  # its row from the record's facts
        config = pairing_key(record.cell)
        pairs = [
            PairView(slug=s, arm=arm_label(k))
            for s in self.index.slugs()
            if s != slug
            and (k := self.index.cell_key(s)) is not None
            and pairing_key(k) == config
            and self.index.entry(s, seed, trial) is not None
        ]
        return msgspec.structs.replace(view, pairs=pairs)

    def brief(self, slug: str, seed: int, trial: int = 0) -> tuple[str, str] | None:
        """The episode's brief as its arm built it (the system prompt) and where it was sent
        (its model's ``brief_role`` in the manifest: system, or leading the first user turn);
        None when the episode is not in the logs or no longer regenerates (#49)."""
        record = self.index.record(slug, seed, trial)
        episode = self._episode(record) if record is not None else None
        if record is None or episode is None:
            return None
        run = self.run_dir.parent if self.run_dir.name == "logs" else self.run_dir
        grid = read_manifest(run).get("grid")
        models = grid.get("models") if isinstance(grid, dict) else None
        mine = [
            m
            for m in (models if isinstance(models, list) else [])
            if isinstance(m, dict) and m.get("name") == record.cell.model
        ]
        role = mine[0].get("brief_role") if mine else None
        return system_prompt(record, episode), str(role or "system")

    def compare(self, seed: int, a: str, b: str, trial: int = 0) -> CompareView | None:
        va, vb = self.episode(a, seed, trial), self.episode(b, seed, trial)
        if va is None or vb is None:
            return None
        return compare_view(va, vb)
