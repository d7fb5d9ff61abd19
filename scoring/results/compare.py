"""Two runs compared cell by cell (#40, ``ladder compare A B``). Pure.

The same configuration's seeds are paired across the runs (a rerun, a second model, another
server): per cell and scoring, the seeds both runs counted, each run's successes, the
discordant pairs and the exact McNemar p; Holm over every pair of a scoring. Cells pair by
their key; when the runs hold one model each and the models differ, by the key without its
model (the configuration, arm and knobs), labelled ``A-model vs B-model``.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from protocol.config import model_label
from protocol.records import CellKey
from scoring.replay.episode_score import EpisodeScore
from scoring.results.cells import SCORINGS, ladder_sort_key, paired_contrast
from scoring.results.lines import ContrastLine
from scoring.results.stats import holm
from scoring.results.trials import Unit

__all__ = ["CompareError", "compare_runs"]


class CompareError(ValueError):
    """Two runs that cannot be paired; the message is one line."""


def _models(scores: Sequence[EpisodeScore]) -> set[str]:
    """The runs' models as the tables label them (``qwen3-235b <- scripted/synthetic``)."""
    return {model_label(s.cell) for s in scores}


def compare_runs(a: Sequence[EpisodeScore], b: Sequence[EpisodeScore]) -> list[ContrastLine]:
    """One paired line per cell both runs hold and scoring (``a`` and ``b`` as the runs'
    names are set by the caller; here ``a="A"``, ``b="B"``), Holm within each scoring."""
    ma, mb = _models(a), _models(b)
    rename: str | None = None
    if ma != mb:
        if len(ma) != 1 or len(mb) != 1:
            raise CompareError(
                f"the runs hold different models ({', '.join(sorted(ma))} against "
                f"{', '.join(sorted(mb))}); pick one model in each with --model"
            )
        rename = f"{next(iter(ma))} vs {next(iter(mb))}"

    def key(cell: CellKey) -> CellKey:
        if rename is None:
            return cell
        return msgspec.structs.replace(cell, model=rename, served_by="")

    runs: list[dict[CellKey, dict[Unit, EpisodeScore]]] = [{}, {}]
    for side, scores in zip(runs, (a, b), strict=True):
        for s in scores:  # paired by seed (with trials: each seed's majority)
            side.setdefault(key(s.cell), {})[s.unit] = s
    shared = sorted(runs[0].keys() & runs[1].keys(), key=ladder_sort_key)
    if not shared:
        raise CompareError("the runs share no cell (configuration and arm)")
    out: list[ContrastLine] = []
    for scoring in SCORINGS:
        lines = [
            paired_contrast(
                cell, ("A", runs[0][cell]), ("B", runs[1][cell]), scoring, kind="compare"
            )
            for cell in shared
        ]
        for line, p in zip(lines, holm([x.p for x in lines]), strict=True):
            line.p_holm = p
            line.family = "compare"
        out += lines
    return out
