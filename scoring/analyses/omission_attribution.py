"""Table 10: every omission of the enforcement gate attributed, from logged episodes (pure).

An omission is an ``omission`` error of the primary scoring (an ask on a ground-truth
eligible step with no valid execution). Each is attributed by the directive the gate issued
on that turn (``TurnRecord.directive``, :mod:`scoring.replay.directive_kinds`):

* ELIGIBLE for the step: the agent's. ``declined`` when the reply (and a same-turn
  ``first_reply``) carries no ref line except re-displays of an earlier turn's work order
  (a stale re-display counts as a decline); ``wrong_ref`` when it carries a ref line with a
  wrong code (another step's included) or a new work order that is not the turn's: the
  booking's fault.
* BLOCKED for the step: an over-block, the compiled state's fault. ``correct_ref`` counts
  those on which the agent wrote the correct ref and the gate refused it. The root cause,
  one per omission, is read from the typed compile record (``EpisodeRecord.compile``) and the
  regenerated episode, over the prerequisites the directive names as missing, in this order:
  ``empty`` (a prerequisite whose compiled completion code is empty: it can never be
  booked), ``cancelled`` (the cancelled step still listed as a prerequisite after the
  compiled revision), ``rewire`` (a prerequisite the compiled revision's rewire introduced
  that the generator's graph after its revision lacks), else ``other``.
* Every other case (no directive, a directive naming another step, an already DONE or
  CANCELLED directive for the step, an ELIGIBLE turn whose correct ref was refused):
  ``other``, reported so that the attribution adds up to every omission.

Episodes: ``defect`` counts episodes the ground-truth-free validator flags
(``ValidatorRecord.passed`` false), ``differs`` those whose compile is not exactly the
generator's (``AccuracyRecord.exact`` false), and ``overblock_in_passing`` the over-blocked
omissions in episodes the validator passes (the paper finds none). Cells: an arm that
always enforces (``ArmSpec.enforcing``, not ``validated``: ``enforce``), and any episode whose
compile record says it enforced (the hybrid where its validator passed); not the corrupted-state ablation's cells, whose over-blocks the corruption makes
(:mod:`scoring.analyses.corruption_replay` attributes those).

The compute is a :class:`~scoring.analyses.base.Fold`: each episode gives its cell and its
tallies (an episode without an omission only its episode counts, its turns not walked), and
the batch's lines sum them per cell.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from protocol.arms.table import enforced
from protocol.config import config_label
from protocol.records import CellKey, CompileRecord, Episode, EpisodeRecord, TurnRecord
from protocol.state.receipts import find_refs
from protocol.stress.budget import cell_episode
from scoring.analyses.base import Analysis, Fold, Pair, by_cell, markdown_section
from scoring.analyses.tallies import Tallied, by_cell_sums
from scoring.replay.directive_kinds import ParsedDirective, parse_directive
from scoring.replay.episode_score import EpisodeScore
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import cell_sort_key

__all__ = [
    "ATTRIBUTIONS",
    "OMISSION_ATTRIBUTION",
    "ROOT_CAUSES",
    "AttributionLine",
    "attribute_overblock",
    "attribution_lines",
]

ATTRIBUTIONS = ("declined", "wrong_ref", "overblock", "other")
ROOT_CAUSES = ("empty", "cancelled", "rewire", "other")


class AttributionLine(msgspec.Struct, frozen=True, kw_only=True, tag="omission_attribution"):
    cell: CellKey
    episodes: int
    omissions: int
    declined: int  # agent: an ELIGIBLE directive declined with no booking attempt
    wrong_ref: int  # booking: a ref with a wrong code or work order
    overblock: int  # compiled state: BLOCKED for a ground-truth-eligible step
    other: int
    correct_ref: int  # over-blocks on which the agent's correct ref was refused
    root_causes: dict[str, int]  # over-block root cause -> omissions, every cause present
    defect: int  # episodes the validator flags
    differs: int  # episodes whose compile differs from the generator
    overblock_in_passing: int  # over-blocked omissions in episodes the validator passes


def _enforcing(record: EpisodeRecord) -> bool:
    return enforced(record.cell.arm, record.compile is not None and record.compile.enforcing)


def _wrong_ref(turn: TurnRecord, code: str, earlier: set[str]) -> bool:
    for text in (turn.first_reply or "", turn.reply):
        for ref in find_refs(text):
            if ref.work_order in earlier:
                continue  # a re-display of an earlier receipt reads as a decline
            if (ref.code, ref.work_order) != (code, turn.work_order):
                return True
    return False


def attribute_overblock(
    step: str, directive: ParsedDirective, compiled: CompileRecord | None, episode: Episode
) -> str:
    """The root cause (one of :data:`ROOT_CAUSES`) of a BLOCKED directive for ``step``."""
    if compiled is None:
        return "other"
    missing = directive.missing
    for m in missing:
        s = compiled.step(m)
        if s is None or not s.code.strip():
            return "empty"
    cancelled = {episode.revision.cancel, compiled.revision.cancel} - {None}
    if any(m in cancelled for m in missing):
        return "cancelled"
    rewired = compiled.revision.rewires.get(step, ())
    truth = set(episode.revision.rewires.get(step, episode.step(step).deps))
    if any(m in rewired and m not in truth for m in missing):
        return "rewire"
    return "other"


# An episode's tallies, in this order (then ROOT_CAUSES' over-blocks); the line's fields
_FIELDS = ("episodes", "omissions", *ATTRIBUTIONS, "correct_ref", "defect", "differs",
           "overblock_in_passing")  # fmt: skip
_AT = {name: i for i, name in enumerate(_FIELDS)}
_ROOT = len(_FIELDS)  # where the root causes start
_CAUSE = {cause: _ROOT + i for i, cause in enumerate(ROOT_CAUSES)}
_N = _ROOT + len(ROOT_CAUSES)


def _each(pair: Pair, cache: EpisodeCache) -> Tallied | None:
    record, score = pair
    if not score.counted or not _enforcing(record) or record.cell.knobs.corruption > 0:
        return None
    a = [0] * _N
    a[0] = 1  # one episode
    info = record.compile
    passed = info is None or info.validator.passed
    a[_AT["defect"]] = not passed
    a[_AT["differs"]] = info is not None and not info.accuracy.exact
    if score.primary.channels["omission"]:  # else none of its turns has one to attribute
        _omissions(a, record, score, cache, passed)
    return (record.cell, tuple(a))


def _omissions(
    a: list[int], record: EpisodeRecord, score: EpisodeScore, cache: EpisodeCache, passed: bool
) -> None:
    """Attribute each omission of one episode into its tallies ``a``."""
    info = record.compile
    episode = cell_episode(cache.get(record.spec), record.cell.knobs)  # its rules (#48)
    earlier: set[str] = set()
    for turn, scored in zip(record.turns, score.primary.turns, strict=False):
        for err in scored.errors:
            if err.channel != "omission":
                continue
            a[1] += 1
            d = parse_directive(turn.directive)
            code = episode.step(err.step).code
            if d is None or d.step != err.step or d.kind not in ("eligible", "blocked"):
                a[_AT["other"]] += 1
            elif d.kind == "blocked":
                a[_AT["overblock"]] += 1
                a[_AT["overblock_in_passing"]] += passed
                a[_AT["correct_ref"]] += any(
                    b.code == code and b.work_order == turn.work_order for b in turn.refused
                )
                a[_CAUSE[attribute_overblock(err.step, d, info, episode)]] += 1
            elif _wrong_ref(turn, code, earlier):
                a[_AT["wrong_ref"]] += 1
            elif any(b.code == code for b in turn.refused):
                a[_AT["other"]] += 1  # a correct ref refused under ELIGIBLE
            else:
                a[_AT["declined"]] += 1
        if turn.work_order is not None:
            earlier.add(turn.work_order)


def _whole(episodes: list[Tallied]) -> list[AttributionLine]:
    """One line per enforcing cell, from its episodes' tallies."""
    acc = by_cell_sums(episodes)
    return [_line(cell, acc[cell]) for cell in sorted(acc, key=cell_sort_key)]


_FOLD = Fold(_each, _whole)


def _line(cell: CellKey, a: tuple[int, ...]) -> AttributionLine:
    causes = dict(zip(ROOT_CAUSES, a[_ROOT:], strict=True))
    return AttributionLine(cell=cell, root_causes=causes, **dict(zip(_FIELDS, a, strict=False)))


def attribution_lines(
    pairs: Iterable[Pair], episodes: EpisodeCache | None = None
) -> list[AttributionLine]:
    """One line per enforcing cell (scores need per-turn detail)."""
    return list(_FOLD(pairs, episodes if episodes is not None else EpisodeCache()))


def _markdown(lines: tuple[AttributionLine, ...]) -> list[str]:
    header = ["arm", "configuration", "omissions", "declined", "wrong ref", "over-block",
              "corr. ref", "empty", "canc.", "rewire", "other cause", "other",
              "defect eps", "!= GT eps", "over-block, validator passed"]  # fmt: skip
    rows = [
        [
            line.cell.arm,
            config_label(line.cell),
            *map(
                str,
                (
                    line.omissions,
                    line.declined,
                    line.wrong_ref,
                    line.overblock,
                    line.correct_ref,
                    *line.root_causes.values(),
                    line.other,
                    line.defect,
                    line.differs,
                    line.overblock_in_passing,
                ),
            ),
        ]
        for line in lines
    ]
    return markdown_section(
        "Enforcement-gate omissions attributed (Table 10 shape)",
        "Agent (declined an ELIGIBLE directive), booking (a ref with a wrong code or work "
        "order), compiled state (over-block: BLOCKED for an eligible step; corr. ref: the "
        "correct ref refused) with the over-block's root cause; other: no directive or one "
        "for another step. Episodes the validator flags (defect) and whose compile differs "
        "from the generator.",
        header,
        rows,
    )


OMISSION_ATTRIBUTION: Analysis[AttributionLine, AttributionLine] = Analysis(
    name="omission_attribution",
    table="Table 10",
    compute=_FOLD,
    finish=by_cell,
    markdown=_markdown,
)
