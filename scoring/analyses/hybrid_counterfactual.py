"""The validator-gated hybrid scored offline (Appendix D.3), from logged episodes (pure).

D.3: "enforce in the episodes the validator passes and fall back to the directive gate in
the ones it flags". The validator's verdict is known before the episode's first turn (the
compile comes first, and the gate arms of one configuration share it), so the hybrid's
episode is the logged enforcement episode where the validator passes and the logged
directive-gate episode of the same seed where it flags. Per configuration with both arms on
shared seeds: strict successes and omissions of the enforcement gate, the directive gate and
the hybrid; correct bookings the enforcement gate refused (a refused booking of the turn's
own step with the turn's work order on a turn that owes it), and how many of them sit in
flagged episodes (the hybrid refuses the others). Only counted episodes of both arms enter;
scores need per-turn detail. The compute is a :class:`~scoring.analyses.base.Fold`: each
gate episode gives its seed's summary (a :class:`HybridSeed`), paired across the two arms
in the finish.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from protocol.config import config_label
from protocol.records import CellKey, EpisodeRecord
from protocol.stress.budget import cell_episode
from scoring.analyses.base import Analysis, Fold, Pair, markdown_section
from scoring.replay.episode_score import EpisodeScore
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import cell_sort_key

__all__ = [
    "HYBRID",
    "HybridLine",
    "HybridSeed",
    "hybrid_from_seeds",
    "hybrid_lines",
    "hybrid_seeds",
]


class HybridLine(msgspec.Struct, frozen=True, kw_only=True, tag="hybrid_counterfactual"):
    cell: CellKey  # the enforcement cell of the configuration
    n: int  # seeds with both arms counted
    flagged: int  # ... whose compile the validator flags
    enforce_successes: int
    directive_successes: int
    hybrid_successes: int
    enforce_omissions: int
    directive_omissions: int
    hybrid_omissions: int
    refused_correct: int  # correct bookings the enforcement gate refused
    refused_correct_flagged: int  # ... in flagged episodes (the hybrid would not refuse them)


def _refused_correct(record: EpisodeRecord, score: EpisodeScore, cache: EpisodeCache) -> int:
    """Refused bookings that were correct: the turn's own step with the turn's work order on
    a turn whose label (primary replay) owes the execution (eligible, or an authorized
    redo)."""
    for t in record.turns:
        if t.refused:
            break
    else:
        return 0  # nothing refused (most episodes): no episode regenerated (#50)
    episode = cell_episode(cache.get(record.spec), record.cell.knobs)  # its rules (#48)
    n = 0
    for t, s in zip(record.turns, score.primary.turns, strict=False):
        if not t.refused or t.step is None or s.label not in ("eligible", "redo"):
            continue  # a turn that refused nothing adds nothing
        code = episode.step(t.step).code
        n += sum(b.code == code and b.work_order == t.work_order for b in t.refused)
    return n


class HybridSeed(msgspec.Struct, frozen=True, kw_only=True):
    """What the hybrid needs of one gate episode (a compact summary: runs stream them)."""

    key: CellKey  # the configuration's enforcement cell
    arm: str  # enforce or directive
    seed: int
    flagged: bool
    success: bool
    omissions: int
    refused_correct: int


# What one counted gate episode gives: its cell, seed, whether the validator flags its
# compile, its strict success, its omissions, its correct bookings refused
_Seed = tuple[CellKey, int, bool, bool, int, int]


def _each(pair: Pair, cache: EpisodeCache) -> _Seed | None:
    record, score = pair
    cell = record.cell
    if cell.arm not in ("enforce", "directive") or not score.counted:
        return None
    return (
        cell,
        record.spec.seed,
        record.compile is not None and not record.compile.validator.passed,
        score.primary.success,
        score.primary.channels["omission"],
        _refused_correct(record, score, cache) if cell.arm == "enforce" else 0,
    )


def _whole(values: list[_Seed]) -> list[HybridSeed]:
    """The batch's summaries, their configuration's enforcement cell one object per cell (a
    worker's part pickles it once, not once per seed, #50)."""
    keys: dict[CellKey, CellKey] = {}
    out: list[HybridSeed] = []
    for cell, seed, flagged, success, omissions, refused in values:
        key = keys.get(cell)
        if key is None:
            key = keys[cell] = msgspec.structs.replace(cell, arm="enforce")
        out.append(HybridSeed(key=key, arm=cell.arm, seed=seed, flagged=flagged,
                              success=success, omissions=omissions, refused_correct=refused))  # fmt: skip
    return out


_FOLD = Fold(_each, _whole)


def hybrid_seeds(pairs: Iterable[Pair], episodes: EpisodeCache | None = None) -> list[HybridSeed]:
    """The summaries of the counted enforce and directive episodes among *pairs*."""
    return list(_FOLD(pairs, episodes if episodes is not None else EpisodeCache()))


def hybrid_from_seeds(seeds: Iterable[HybridSeed]) -> list[HybridLine]:
    """One line per configuration with both gates on shared seeds."""
    by: dict[CellKey, dict[str, dict[int, HybridSeed]]] = {}
    for h in seeds:
        by.setdefault(h.key, {}).setdefault(h.arm, {})[h.seed] = h
    out: list[HybridLine] = []
    for key in sorted(by, key=cell_sort_key):
        enforce, directive = by[key].get("enforce", {}), by[key].get("directive", {})
        shared = sorted(set(enforce) & set(directive))
        if not shared:
            continue
        a = dict.fromkeys(
            ("flagged", "enforce_successes", "directive_successes", "hybrid_successes",
             "enforce_omissions", "directive_omissions", "hybrid_omissions", "refused_correct",
             "refused_correct_flagged"), 0)  # fmt: skip
        for seed in shared:
            e, d = enforce[seed], directive[seed]
            h = d if e.flagged else e
            a["flagged"] += e.flagged
            a["enforce_successes"] += e.success
            a["directive_successes"] += d.success
            a["hybrid_successes"] += h.success
            a["enforce_omissions"] += e.omissions
            a["directive_omissions"] += d.omissions
            a["hybrid_omissions"] += h.omissions
            a["refused_correct"] += e.refused_correct
            a["refused_correct_flagged"] += e.refused_correct if e.flagged else 0
        out.append(HybridLine(cell=key, n=len(shared), **a))
    return out


def hybrid_lines(
    pairs: Iterable[tuple[EpisodeRecord, EpisodeScore]], episodes: EpisodeCache | None = None
) -> list[HybridLine]:
    """One line per configuration holding an ``enforce`` and a ``directive`` cell with the
    same knobs, wording and schedule (scores need per-turn detail)."""
    return hybrid_from_seeds(hybrid_seeds(pairs, episodes))


def _markdown(lines: tuple[HybridLine, ...]) -> list[str]:
    header = ["configuration", "seeds", "flagged", "strict: enforce / directive / hybrid",
              "omissions: enforce / directive / hybrid",
              "correct refs refused (in flagged episodes)"]  # fmt: skip
    rows = [
        [config_label(h.cell), str(h.n), str(h.flagged),
         f"{h.enforce_successes} / {h.directive_successes} / {h.hybrid_successes}",
         f"{h.enforce_omissions} / {h.directive_omissions} / {h.hybrid_omissions}",
         f"{h.refused_correct} ({h.refused_correct_flagged})"]
        for h in lines
    ]  # fmt: skip
    return markdown_section(
        "The validator-gated hybrid, offline (Appendix D.3)",
        "On the seeds both gates ran: the enforcement episode where the validator passes "
        "the compile, the directive-gate episode where it flags it.",
        header,
        rows,
    )


def _finish(seeds: list[HybridSeed]) -> tuple[HybridLine, ...]:
    return tuple(hybrid_from_seeds(seeds))


HYBRID: Analysis[HybridSeed, HybridLine] = Analysis(
    name="hybrid",
    table="Appendix D.3",
    compute=_FOLD,
    finish=_finish,
    markdown=_markdown,
)
