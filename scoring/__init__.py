"""Pure scoring: replay logged episodes against regenerated ground truth, strict and
decline-aware success, the six error channels, statistics, aggregation by cell and ladder,
the streaming scorer, and report tables. No model, no I/O (plots: :mod:`scoring.report.markdown`).
"""

from scoring.replay.episode import LABELS, EpisodeScore, Scoring, TurnScore, score_episode
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import SCORINGS, cell_line, ladder_contrasts
from scoring.results.families import score_lines
from scoring.results.lines import (
    CellLine,
    ContrastLine,
    HelperLine,
    ResultLine,
    decode_line,
    line_json,
)
from scoring.results.offline import paused_gc, rescore, score_records
from scoring.results.stats import holm, mcnemar_exact, wilson
from scoring.results.stream import StreamingScorer

__all__ = [
    "LABELS",
    "SCORINGS",
    "CellLine",
    "ContrastLine",
    "EpisodeCache",
    "EpisodeScore",
    "HelperLine",
    "ResultLine",
    "Scoring",
    "StreamingScorer",
    "TurnScore",
    "cell_line",
    "decode_line",
    "holm",
    "ladder_contrasts",
    "line_json",
    "mcnemar_exact",
    "paused_gc",
    "rescore",
    "score_episode",
    "score_lines",
    "score_records",
    "wilson",
]
