"""Pure scoring: replay logged episodes against regenerated ground truth, strict and
decline-aware success, the six error channels, statistics, aggregation by cell and ladder,
the streaming scorer, and report tables. No model, no I/O (plots: :mod:`scoring.report`).
"""

from scoring.cells import SCORINGS, cell_line, ladder_contrasts, score_lines
from scoring.episodes import EpisodeCache
from scoring.offline import paused_gc, rescore, score_records
from scoring.replay import LABELS, EpisodeScore, Scoring, TurnScore, score_episode
from scoring.stats import holm, mcnemar_exact, wilson
from scoring.stream import StreamingScorer

__all__ = [
    "LABELS",
    "SCORINGS",
    "EpisodeCache",
    "EpisodeScore",
    "Scoring",
    "StreamingScorer",
    "TurnScore",
    "cell_line",
    "holm",
    "ladder_contrasts",
    "mcnemar_exact",
    "paused_gc",
    "rescore",
    "score_episode",
    "score_lines",
    "score_records",
    "wilson",
]
