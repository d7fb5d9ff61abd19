"""Aggregation by cell and by ladder, as JSON-able result lines.

* A *cell* is one arm on one configuration (:class:`protocol.CellKey`: model, regime, S, rho,
  domain, brief, arm and the variant knobs). Its line counts only episodes that are scorable
  and not infrastructure errors (``n``); infrastructure errors and unscorable records are
  reported beside it.
* A *configuration* is a cell key without its arm, knobs included: a ladder is the arms that
  share every other field. (A variant run for one arm only, say ``checklist`` with
  ``checklist_mode=replace``, is its own configuration with no adjacent contrast.)
* Adjacent contrasts follow the paper's rungs (``protocol.arms.table.ladder()``: raw, checklist,
  directive, enforce) between neighbouring rungs that are both present (a missing rung
  breaks the chain: no raw -> directive when the checklist is absent), in configurations
  whose knobs are the defaults or ``protocol.knobs.platform_knobs()`` (a variant run, say
  ``directive`` and ``enforce`` with ``directive_role=system``, is no ladder); plus the
  side contrasts the arm table declares within one configuration
  (``protocol.arms.table.side_contrasts()``: ledger against checklist and directive, hybrid against
  enforce) when both arms are present; other arms (the memory arms) get cell lines but no
  contrast. Each contrast pairs the seeds both arms
  completed without infrastructure error and runs the exact McNemar test on the discordant
  pairs, once per scoring (with repeated trials a seed's outcome is its trials' majority,
  :mod:`scoring.results.trials`) (``strict``: the primary scoring; ``decline_aware``).
* Holm: :func:`scoring.results.families.score_lines` adjusts within the paper's families, each named
  by the table it feeds (:mod:`scoring.results.families`); the streaming scorer adjusts within one
  ladder.
* Channel rates (Table 9): errors over the turns carrying the channel's label
  (:data:`RATES`); unrequested executions have no label and are reported as a count.
"""

from __future__ import annotations

import itertools
import operator
from collections import Counter
from collections.abc import Iterable, Mapping

import msgspec

from protocol.arms.table import arm_names, arm_rank, ladder, side_contrasts
from protocol.knobs import platform_knobs
from protocol.records import NO_REPLY, CellKey, Knobs
from protocol.state.machine import CHANNELS
from scoring.replay.askback import Burden
from scoring.replay.cuts import add_cuts
from scoring.replay.episode_score import LABELS, EpisodeScore, Scoring
from scoring.results.lines import CellLine, ContrastLine
from scoring.results.stats import clustered_wilson, mcnemar_exact, wilson
from scoring.results.trials import Unit, majority, pass_hats

__all__ = [
    "RATES",
    "SCORINGS",
    "WinsMemo",
    "cell_line",
    "cell_sort_key",
    "config_of",
    "group_scores",
    "is_ladder",
    "ladder_contrasts",
    "ladder_sort_key",
    "paired_contrast",
    "scoring_of",
    "seed_wins",
]

SCORINGS: tuple[str, ...] = ("strict", "decline_aware")
RATES: tuple[tuple[str, str], ...] = (
    ("re_execution", "done"),
    ("superseded", "cancelled"),
    ("premature", "blocked"),
    ("omission", "eligible"),
    ("refused_redo", "redo"),
)


def config_of(key: CellKey) -> CellKey:
    """The configuration of a cell: its key with the arm blanked (hashable)."""
    return msgspec.structs.replace(key, arm="")


# model, regime, S, rho, domain, brief, schedule, tier, ambiguous rate, knobs (as text)
_ConfigOrder = tuple[str, str, int, float, str, str, str, int, float, tuple[str, ...]]


def _config_sort(key: CellKey) -> _ConfigOrder:
    knobs = tuple(str(getattr(key.knobs, f)) for f in Knobs.__struct_fields__)
    stress = (key.schedule or "", key.paraphrase_tier, key.ambiguous_rate)
    return (key.model, key.regime, key.steps, key.density, key.domain, key.brief, *stress, knobs)


def cell_sort_key(key: CellKey) -> tuple[_ConfigOrder, tuple[int, str]]:
    """Configurations in a stable order, arms in ladder order within each."""
    return (_config_sort(key), arm_rank(key.arm))


def ladder_sort_key(key: CellKey) -> tuple[_ConfigOrder, tuple[int, str], tuple[str, ...]]:
    """Cells in ladder order (#40): the configuration without its knobs, then the arm's rung
    (raw, checklist, directive, enforce, ...), then the knobs (a plain arm before its
    variants), so ``enforce binding=request`` follows ``enforce``, not the whole table."""
    plain = msgspec.structs.replace(key, knobs=Knobs())
    knobs = tuple(f"{k}={v}" for k, v in key.knobs.changed().items())
    return (_config_sort(plain), arm_rank(key.arm), knobs)


def scoring_of(score: EpisodeScore, scoring: str) -> Scoring:
    return score.primary if scoring == "strict" else score.decline_aware


def _ratio(k: int, n: int) -> float | None:
    return k / n if n else None


def cell_line(key: CellKey, scores: Iterable[EpisodeScore]) -> CellLine:
    """The result line of one cell from its episodes' scores (one per seed and trial: n
    counts every trial; with repeated trials, pass^k besides, :mod:`scoring.results.trials`).
    Each scoring's parts are listed once and every count read from those lists (#50)."""
    scores = list(scores)
    counted = [s for s in scores if s.counted]
    n = len(counted)
    trials = len({s.trial for s in scores}) if scores else 1
    primary = [s.primary for s in counted]
    aware = [s.decline_aware for s in counted]
    wins = {"strict": [x.success for x in primary], "decline_aware": [x.success for x in aware]}
    success = {name: sum(won) for name, won in wins.items()}
    # with repeated trials, each seed's outcomes per scoring: its interval and pass^k
    seeds = [s.seed for s in counted]
    by_seed = {name: _outcomes(seeds, won) for name, won in wins.items()} if trials > 1 else {}
    keys, label_keys = _channel_keys(key)
    channels = _sum_dicts([x.channels for x in primary], keys)
    labels = _sum_dicts([x.labels for x in primary], label_keys)
    rates: dict[str, float | int | None] = {
        ch: _ratio(channels[ch], labels[label]) for ch, label in _rates(key)
    }
    rates["unrequested"] = channels["unrequested"]
    turns = sum(x.n_turns for x in primary)
    return CellLine(
        cell=key,
        slug=key.slug(),
        n=n,
        strict_successes=success["strict"],
        strict=_ratio(success["strict"], n),
        strict_ci=_interval(success["strict"], n, by_seed.get("strict")),
        decline_aware_successes=success["decline_aware"],
        decline_aware=_ratio(success["decline_aware"], n),
        decline_aware_ci=_interval(success["decline_aware"], n, by_seed.get("decline_aware")),
        infrastructure_errors=sum(
            s.scorable and s.infrastructure and s.termination not in NO_REPLY for s in scores
        ),
        no_reply=sum(s.termination in NO_REPLY for s in scores),
        unscorable=sum(not s.scorable for s in scores),
        mismatched_episodes=sum(bool(s.mismatches) for s in counted),
        channels=channels,
        decline_aware_channels=_sum_dicts([x.channels for x in aware], keys),
        labels=labels,
        channel_rates=rates,
        refused=sum(s.refused for s in counted),
        false_completions=sum(s.false_completions for s in counted),
        citations=sum(s.citations for s in counted),
        redisplays=sum(s.redisplays for s in counted),
        unknown=sum(s.unknown for s in counted),
        turn_accuracy=_ratio(sum(x.turns_ok for x in primary), turns),
        seeds=tuple(sorted(set(seeds))),
        context_overflows=sum(s.model_failure for s in counted),
        askback=_burden(counted),
        trials=trials,
        pass_k={name: pass_hats(list(o.values()), trials) for name, o in by_seed.items()},
        cut=add_cuts(s.cut for s in scores),
    )


def _interval(k: int, n: int, by_seed: dict[int, list[bool]] | None) -> tuple[float, float]:
    """The 95% interval of the cell's success rate, ``k`` of ``n``: Wilson's with one trial
    per seed; with repeated trials (``by_seed``: each seed's outcomes), clustered by seed (a
    seed's trials are not independent: :func:`scoring.results.stats.clustered_wilson`, its
    design effect at least 1)."""
    if by_seed is None:
        return wilson(k, n)
    return clustered_wilson([(sum(o), len(o)) for o in by_seed.values()])


def _outcomes(seeds: list[int], wins: list[bool]) -> dict[int, list[bool]]:
    """Each seed's outcomes, in the order given (its trials): ``wins[i]`` is ``seeds[i]``'s."""
    out: dict[int, list[bool]] = {}
    for seed, won in zip(seeds, wins, strict=True):
        hit = out.get(seed)
        if hit is None:
            out[seed] = [won]
        else:
            hit.append(won)
    return out


def _by_seed(scores: Iterable[EpisodeScore], scoring: str) -> dict[int, list[bool]]:
    """Each seed's outcomes under ``scoring``, one per given score (its trials)."""
    scores = list(scores)
    return _outcomes([s.seed for s in scores], [scoring_of(s, scoring).success for s in scores])


def _burden(counted: list[EpisodeScore]) -> Burden | None:
    """The cell's ask-back burden, summed over its counted episodes (None: knobs off)."""
    parts = [s.burden for s in counted if s.burden is not None]
    return sum(parts[1:], parts[0]) if parts else None


def _rule_rates(key: CellKey) -> tuple[tuple[str, str], ...]:
    """(channel, label) of each rule on in the cell (issue #48): the budget's over_budget on
    spent requests, the expiry's lapse_missed on lapsed ones, the exclusive steps'
    exclusive_closed on closed ones."""
    rules = (
        ("budget", "over_budget", "spent"),
        ("expiry", "lapse_missed", "lapsed"),
        ("exclusive", "exclusive_closed", "closed"),
    )
    return tuple((ch, label) for knob, ch, label in rules if getattr(key.knobs, knob))


def _channel_keys(key: CellKey) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The channels and labels a cell's line lists: the paper's, and a rule's own channel and
    label when its knob is on."""
    extra = _rule_rates(key)
    return (*CHANNELS, *(c for c, _ in extra)), (*LABELS, *(lb for _, lb in extra))


def _rates(key: CellKey) -> tuple[tuple[str, str], ...]:
    """Each channel with a rate and the label it is a rate of (a rule's when on)."""
    return (*RATES, *_rule_rates(key))


def _sum_dicts(dicts: Iterable[Mapping[str, int]], keys: Iterable[str]) -> dict[str, int]:
    """The counts summed, ``keys`` first, then each other key where it first appears. Where
    every dict has the first one's keys (a cell's scores list every channel and label), the
    counts are summed a column at a time (#50): the same sums, in the same order."""
    total = dict.fromkeys(keys, 0)
    listed = list(dicts)
    first = listed[0] if listed else {}
    if len(first) > 1:
        width, pick = len(first), operator.itemgetter(*first)
        try:
            if all(len(d) == width for d in listed):  # every key of the first, and no other
                for k, column in zip(first, zip(*map(pick, listed), strict=True), strict=True):
                    total[k] = total.get(k, 0) + sum(column)
                return total
        except KeyError:
            total = dict.fromkeys(keys, 0)  # another key set: summed a dict at a time
    times = Counter(map(id, listed))
    for d in {id(d): d for d in listed}.values():  # the first appearances, in order
        m = times[id(d)]
        for k, v in d.items():
            total[k] = total.get(k, 0) + v * m
    return total


_Wins = dict[int, bool]  # each seed's outcome (its trials' majority) under one scoring
# seed_wins kept by cell (its id, and the cell to keep the id its own) and scoring
WinsMemo = dict[tuple[int, str], tuple[Mapping[Unit, EpisodeScore], _Wins]]


def seed_wins(
    units: Mapping[Unit, EpisodeScore], scoring: str, memo: WinsMemo | None = None
) -> _Wins:
    """Each seed's outcome under ``scoring`` over its counted trials (their majority,
    :func:`scoring.results.trials.majority`); ``memo``: kept by cell for the next contrast
    of the cell (an arm is in several contrasts, #50)."""
    hit = memo.get((id(units), scoring)) if memo is not None else None
    if hit is not None and hit[0] is units:
        return hit[1]
    by_seed = _by_seed((s for s in units.values() if s.counted), scoring)
    wins = {seed: majority(o) for seed, o in by_seed.items()}
    if memo is not None:
        memo[(id(units), scoring)] = (units, wins)  # the cell held: its id stays its own
    return wins


def paired_contrast(
    config: CellKey,
    a: tuple[str, Mapping[Unit, EpisodeScore]],
    b: tuple[str, Mapping[Unit, EpisodeScore]],
    scoring: str,
    kind: str = "ladder",
    table: str | None = None,
    memo: WinsMemo | None = None,
) -> ContrastLine:
    """The exact McNemar test of ``b`` against ``a`` over the seeds both counted: a seed's
    outcome is its one episode's, or with repeated trials the majority of its counted
    trials (:func:`scoring.results.trials.majority`; docs/trials.md). ``memo``: the cells'
    seed outcomes kept for the caller's next contrast (:func:`seed_wins`)."""
    by_a, by_b = seed_wins(a[1], scoring, memo), seed_wins(b[1], scoring, memo)
    seeds = sorted(by_a.keys() & by_b.keys())
    wins_a = [by_a[s] for s in seeds]
    wins_b = [by_b[s] for s in seeds]
    b_only = sum(y and not x for x, y in zip(wins_a, wins_b, strict=True))
    a_only = sum(x and not y for x, y in zip(wins_a, wins_b, strict=True))
    return ContrastLine(
        config=config,
        a=a[0],
        b=b[0],
        scoring=scoring,
        n=len(seeds),
        a_successes=sum(wins_a),
        b_successes=sum(wins_b),
        b_only=b_only,
        a_only=a_only,
        p=mcnemar_exact(b_only, a_only),
        kind=kind,
        table=table,
    )


def is_ladder(config: CellKey) -> bool:
    """A configuration whose knobs are the defaults or platform knobs only."""
    platform = platform_knobs()
    return all(f in platform for f in config.knobs.changed())


def ladder_contrasts(
    cells: Mapping[CellKey, Mapping[Unit, EpisodeScore]],
) -> list[ContrastLine]:
    """The adjacent and side contrasts of one configuration's cells (``p_holm`` left None).

    *cells* maps each arm's cell key (one configuration) to its scores by (seed, trial).
    """
    known = arm_names()
    by_arm = {k.arm: v for k, v in cells.items() if k.arm in known}
    if not by_arm:
        return []
    config = config_of(next(iter(cells)))
    if not is_ladder(config):
        return []
    pairs: list[tuple[str, str, str, str | None]] = [
        (a, b, "ladder", None)
        for a, b in itertools.pairwise(ladder())
        if a in by_arm and b in by_arm
    ]
    pairs += [
        (a, b, "side", table) for a, b, table in side_contrasts() if a in by_arm and b in by_arm
    ]
    memo: WinsMemo = {}
    return [
        paired_contrast(config, (a, by_arm[a]), (b, by_arm[b]), scoring, kind, table, memo)
        for scoring in SCORINGS
        for a, b, kind, table in pairs
    ]


def group_scores(
    scores: Iterable[EpisodeScore],
) -> dict[CellKey, dict[CellKey, dict[Unit, EpisodeScore]]]:
    """configuration -> cell -> (seed, trial) -> score; a later score of a (cell, seed,
    trial) wins."""
    cells: dict[CellKey, dict[Unit, EpisodeScore]] = {}
    for s in scores:
        cells.setdefault(s.cell, {})[s.unit] = s
    out: dict[CellKey, dict[CellKey, dict[Unit, EpisodeScore]]] = {}
    for key, units in cells.items():  # a cell's configuration once (#50), orders as before
        out.setdefault(config_of(key), {})[key] = units
    return out
