"""Aggregation by cell and by ladder, as JSON-able result lines.

* A *cell* is one arm on one configuration (:class:`protocol.CellKey`: model, regime, S, rho,
  domain, brief, arm and the variant knobs). Its line counts only episodes that are scorable
  and not infrastructure errors (``n``); infrastructure errors and unscorable records are
  reported beside it.
* A *configuration* is a cell key without its arm, knobs included: a ladder is the arms that
  share every other field. (A variant run for one arm only, say ``checklist`` with
  ``checklist_mode=replace``, is its own configuration with no adjacent contrast.)
* Adjacent contrasts follow the paper's rungs (``protocol.arms.LADDER``: raw, checklist,
  directive, enforce) over the rungs present, plus ``protocol.arms.SIDE_CONTRASTS`` (ledger
  against checklist, hybrid against enforce) when both arms are present; other arms (the memory arms) get cell
  lines but no contrast. Each contrast pairs the seeds both arms
  completed without infrastructure error and runs the exact McNemar test on the discordant
  pairs, once per scoring (``strict``: the primary scoring; ``decline_aware``).
* Holm: :func:`score_lines` adjusts over all adjacent contrasts of a scoring in the lines it
  is given (the whole scoring run); the streaming scorer adjusts within one ladder.
* Channel rates (Table 9): errors over the turns carrying the channel's label
  (:data:`RATES`); unrequested executions have no label and are reported as a count.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from protocol.arms import ARM_NAMES, LADDER, SIDE_CONTRASTS, arm_rank
from protocol.records import CellKey, Knobs
from protocol.state import CHANNELS
from scoring.replay import LABELS, EpisodeScore, Scoring
from scoring.stats import holm, mcnemar_exact, wilson

__all__ = [
    "RATES",
    "SCORINGS",
    "apply_holm",
    "cell_json",
    "cell_line",
    "cell_sort_key",
    "config_json",
    "config_of",
    "group_scores",
    "ladder_contrasts",
    "score_lines",
    "scoring_of",
]

SCORINGS: tuple[str, ...] = ("strict", "decline_aware")
RATES: tuple[tuple[str, str], ...] = (
    ("re_execution", "done"),
    ("superseded", "cancelled"),
    ("premature", "blocked"),
    ("omission", "eligible"),
    ("refused_redo", "redo"),
)

Line = dict[str, Any]


def config_of(key: CellKey) -> CellKey:
    """The configuration of a cell: its key with the arm blanked (hashable)."""
    return msgspec.structs.replace(key, arm="")


def config_json(key: CellKey) -> Line:
    out: Line = {
        "model": key.model,
        "regime": key.regime,
        "steps": key.steps,
        "density": key.density,
        "domain": key.domain,
        "brief": key.brief,
    }
    knobs = msgspec.structs.asdict(key.knobs)
    out.update(knobs)  # flattened, for filtering
    out["knobs"] = knobs  # as an object: msgspec.convert(line["cell"], CellKey) round-trips
    return out


def cell_json(key: CellKey) -> Line:
    return {"arm": key.arm, **config_json(key)}


def _config_sort(key: CellKey) -> tuple[Any, ...]:
    knobs = tuple(str(getattr(key.knobs, f)) for f in Knobs.__struct_fields__)
    return (key.model, key.regime, key.steps, key.density, key.domain, key.brief, knobs)


def cell_sort_key(key: CellKey) -> tuple[Any, ...]:
    """Configurations in a stable order, arms in ladder order within each."""
    return (*_config_sort(key), arm_rank(key.arm))


def scoring_of(score: EpisodeScore, scoring: str) -> Scoring:
    return score.primary if scoring == "strict" else score.decline_aware


def _ratio(k: int, n: int) -> float | None:
    return k / n if n else None


def cell_line(key: CellKey, scores: Iterable[EpisodeScore]) -> Line:
    """The result line of one cell from its episodes' scores (one per seed)."""
    scores = list(scores)
    counted = [s for s in scores if s.counted]
    n = len(counted)
    line: Line = {"type": "cell", "cell": cell_json(key), "slug": key.slug(), "n": n}
    for name in SCORINGS:
        k = sum(scoring_of(s, name).success for s in counted)
        lo, hi = wilson(k, n)
        line[f"{name}_successes"] = k
        line[name] = _ratio(k, n)
        line[f"{name}_ci"] = [lo, hi]
    line["infrastructure_errors"] = sum(s.scorable and s.infrastructure for s in scores)
    line["unscorable"] = sum(not s.scorable for s in scores)
    line["mismatched_episodes"] = sum(bool(s.mismatches) for s in counted)
    for name, field in (("channels", "primary"), ("decline_aware_channels", "decline_aware")):
        line[name] = _sum_dicts((getattr(s, field).channels for s in counted), CHANNELS)
    labels = _sum_dicts((s.primary.labels for s in counted), LABELS)
    line["labels"] = labels
    rates: dict[str, float | int | None] = {
        ch: _ratio(line["channels"][ch], labels[label]) for ch, label in RATES
    }
    rates["unrequested"] = line["channels"]["unrequested"]
    line["channel_rates"] = rates
    for field in ("refused", "false_completions", "citations", "redisplays", "unknown"):
        line[field] = sum(getattr(s, field) for s in counted)
    turns = sum(s.primary.n_turns for s in counted)
    line["turn_accuracy"] = _ratio(sum(s.primary.turns_ok for s in counted), turns)
    line["seeds"] = sorted(s.seed for s in counted)
    return line


def _sum_dicts(dicts: Iterable[Mapping[str, int]], keys: Iterable[str]) -> dict[str, int]:
    total = dict.fromkeys(keys, 0)
    for d in dicts:
        for k, v in d.items():
            total[k] = total.get(k, 0) + v
    return total


def _contrast(
    config: CellKey,
    a: tuple[str, Mapping[int, EpisodeScore]],
    b: tuple[str, Mapping[int, EpisodeScore]],
    scoring: str,
) -> Line:
    seeds = sorted(s for s in a[1].keys() & b[1].keys() if a[1][s].counted and b[1][s].counted)
    wins_a = [scoring_of(a[1][s], scoring).success for s in seeds]
    wins_b = [scoring_of(b[1][s], scoring).success for s in seeds]
    b_only = sum(y and not x for x, y in zip(wins_a, wins_b, strict=True))
    a_only = sum(x and not y for x, y in zip(wins_a, wins_b, strict=True))
    return {
        "type": "contrast",
        "config": config_json(config),
        "a": a[0],
        "b": b[0],
        "scoring": scoring,
        "n": len(seeds),
        "a_successes": sum(wins_a),
        "b_successes": sum(wins_b),
        "b_only": b_only,
        "a_only": a_only,
        "p": mcnemar_exact(b_only, a_only),
        "p_holm": None,
    }


def ladder_contrasts(cells: Mapping[CellKey, Mapping[int, EpisodeScore]]) -> list[Line]:
    """The adjacent contrasts of one configuration's cells (``p_holm`` left None).

    *cells* maps each arm's cell key (one configuration) to its scores by seed.
    """
    by_arm = {k.arm: v for k, v in cells.items() if k.arm in ARM_NAMES}
    if not by_arm:
        return []
    rungs = [a for a in LADDER if a in by_arm]
    pairs = list(itertools.pairwise(rungs))
    pairs += [(a, b) for a, b in SIDE_CONTRASTS if a in by_arm and b in by_arm]
    config = config_of(next(iter(cells)))
    return [
        _contrast(config, (a, by_arm[a]), (b, by_arm[b]), scoring)
        for scoring in SCORINGS
        for a, b in pairs
    ]


def apply_holm(contrasts: Sequence[Line]) -> None:
    """Set ``p_holm`` on each contrast line: Holm over the given lines of each scoring."""
    for scoring in SCORINGS:
        family = [c for c in contrasts if c["scoring"] == scoring]
        for c, adjusted in zip(family, holm([c["p"] for c in family]), strict=True):
            c["p_holm"] = adjusted


def group_scores(
    scores: Iterable[EpisodeScore],
) -> dict[CellKey, dict[CellKey, dict[int, EpisodeScore]]]:
    """configuration -> cell -> seed -> score; a later score of a (cell, seed) wins."""
    out: dict[CellKey, dict[CellKey, dict[int, EpisodeScore]]] = {}
    for s in scores:
        out.setdefault(config_of(s.cell), {}).setdefault(s.cell, {})[s.seed] = s
    return out


def score_lines(scores: Iterable[EpisodeScore]) -> list[Line]:
    """Every cell line, then every adjacent contrast with Holm over all contrasts of each
    scoring: the offline (``ladder score``) results of a set of episode scores."""
    grouped = group_scores(scores)
    cells: list[Line] = []
    contrasts: list[Line] = []
    for config in sorted(grouped, key=_config_sort):
        members = grouped[config]
        for key in sorted(members, key=cell_sort_key):
            cells.append(cell_line(key, members[key].values()))
        contrasts.extend(ladder_contrasts(members))
    apply_holm(contrasts)
    return cells + contrasts
