"""The log analyses beside the ladder tables, gathered for ``ladder report`` (pure).

:func:`log_analyses` runs Table 11's obedience (:mod:`scoring.obedience`), Table 10's omission
attribution (:mod:`scoring.omission_attribution`), Table 4's extra columns
(:mod:`scoring.wording_columns`) and Table 12's corruption replay with the receipts-repair
counterfactual (:mod:`scoring.corruption_replay`) and the validator-gated hybrid scored
offline (:mod:`scoring.hybrid_counterfactual`) over scored records (per-turn detail); :func:`analysis_sections`
renders them as Markdown sections, and ``msgspec.json.encode`` of the :class:`Analyses` is
the JSON the report writes beside report.md. A table whose cells are absent is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from protocol.records import EpisodeRecord
from scoring.cells import cell_sort_key
from scoring.corruption_replay import CorruptionLine, corruption_lines
from scoring.episodes import EpisodeCache
from scoring.hybrid_counterfactual import HybridLine, HybridSeed, hybrid_from_seeds, hybrid_seeds
from scoring.obedience import ObedienceLine, obedience_lines
from scoring.omission_attribution import AttributionLine, attribution_lines
from scoring.replay import EpisodeScore
from scoring.stress import (
    SpoofLine,
    ToolFailureLine,
    UserStyleLine,
    spoof_lines,
    spoof_section,
    stressed,
    tool_failure_lines,
    tool_failure_section,
    user_style_lines,
    user_style_section,
)
from scoring.tables import config_label, markdown_table
from scoring.wording_columns import WordingLine, wording_lines

__all__ = ["Analyses", "analysis_sections", "batched_analyses", "log_analyses"]


class Analyses(msgspec.Struct, frozen=True, kw_only=True):
    obedience: tuple[ObedienceLine, ...]  # Table 11
    omission_attribution: tuple[AttributionLine, ...]  # Table 10
    wording: tuple[WordingLine, ...]  # Table 4's extra columns
    corruption: tuple[CorruptionLine, ...] = ()  # Table 12 and the receipts repair (D.4)
    hybrid: tuple[HybridLine, ...] = ()  # the validator-gated hybrid, offline (D.3)
    spoof: tuple[SpoofLine, ...] = ()  # forged state text (#31, ours)
    tool_failure: tuple[ToolFailureLine, ...] = ()  # tools that fail (#31, ours)
    user_style: tuple[UserStyleLine, ...] = ()  # an uncooperative user (#31, ours)


def log_analyses(
    pairs: Iterable[tuple[EpisodeRecord, EpisodeScore]], episodes: EpisodeCache | None = None
) -> Analyses:
    """Every analysis of *pairs* (one batch)."""
    return batched_analyses([list(pairs)], episodes)


def batched_analyses(
    batches: Iterable[Sequence[tuple[EpisodeRecord, EpisodeScore]]],
    episodes: EpisodeCache | None = None,
) -> Analyses:
    """Every analysis over *batches* whose cells do not straddle batches (a run's log files:
    one cell each), keeping only each batch's lines and the hybrid's per-seed summaries, so
    a large run streams file by file."""
    cache = episodes if episodes is not None else EpisodeCache()
    ob: list[ObedienceLine] = []
    at: list[AttributionLine] = []
    wo: list[WordingLine] = []
    co: list[CorruptionLine] = []
    hy: list[HybridSeed] = []
    sp: list[SpoofLine] = []
    tf: list[ToolFailureLine] = []
    us: list[UserStyleLine] = []
    for batch in batches:
        ob += obedience_lines(batch)
        at += attribution_lines(batch, cache)
        wo += wording_lines(batch)
        co += corruption_lines(batch, cache)
        hy += hybrid_seeds(batch, cache)
        sp += spoof_lines(batch)
        tf += tool_failure_lines(batch)
        us += user_style_lines(batch)

    def ordered(lines: list[Any]) -> tuple[Any, ...]:
        return tuple(sorted(lines, key=lambda x: cell_sort_key(x.cell)))

    return Analyses(
        obedience=ordered(ob),
        omission_attribution=ordered(at),
        wording=ordered(wo),
        corruption=ordered(co),
        hybrid=tuple(hybrid_from_seeds(hy)),
        spoof=ordered(sp),
        tool_failure=ordered(stressed(tf)),
        user_style=ordered(us),
    )


def _rate(k: int, n: int, ci: tuple[float, float]) -> str:
    return f"{k}/{n} = {k / n:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]" if n else f"{k}/0"


def analysis_sections(a: Analyses) -> list[str]:
    """Markdown lines of the analyses present (empty when none applies)."""
    out: list[str] = []
    if a.obedience:
        kinds = [k.kind for k in a.obedience[0].kinds]
        header = ["arm", "configuration", *kinds, "all traps", "zero disobedience"]
        rows = [
            [
                line.cell.arm,
                config_label(line.cell),
                *(_rate(k.obeyed, k.n, k.ci) for k in line.kinds),
                _rate(line.trap_obeyed, line.trap_n, line.trap_ci),
                _rate(line.zero_disobedience, line.episodes, line.zero_ci),
            ]
            for line in a.obedience
        ]
        out += [
            "",
            "## Directive obedience (Table 11 shape)",
            "",
            "Directives obeyed of those issued, Wilson 95% intervals: a trap directive (done, "
            "blocked, cancelled) is obeyed when the directed step has no valid execution on "
            "its turn, the redo and eligible directives when it has one; zero disobedience: "
            "episodes that disobey no trap directive.",
            "",
            markdown_table(header, rows),
        ]
    if a.omission_attribution:
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
            for line in a.omission_attribution
        ]
        out += [
            "",
            "## Enforcement-gate omissions attributed (Table 10 shape)",
            "",
            "Agent (declined an ELIGIBLE directive), booking (a ref with a wrong code or work "
            "order), compiled state (over-block: BLOCKED for an eligible step; corr. ref: the "
            "correct ref refused) with the over-block's root cause; other: no directive or one "
            "for another step. Episodes the validator flags (defect) and whose compile differs "
            "from the generator.",
            "",
            markdown_table(header, rows),
        ]
    gated = [w for w in a.wording if w.ambiguous or w.omission_failures or w.matched_turns]
    if gated:
        header = ["arm", "configuration", "matcher agreement (ask, premature, redo)",
                  "first omitted ask misrouted", "ambiguous booked"]  # fmt: skip
        rows = [
            [
                w.cell.arm,
                config_label(w.cell),
                f"{w.matched_agree}/{w.matched_turns} = {w.agreement:.3f}"
                if w.agreement is not None
                else "-",
                f"{w.misrouted}/{w.omission_failures}",
                f"{w.ambiguous_booked}/{w.ambiguous}",
            ]
            for w in gated
        ]
        out += [
            "",
            "## Wording columns (Table 4 shape)",
            "",
            "Matcher agreement over the ask, premature and redo-probe turns; failing episodes "
            "with an omission whose first omitted ask the matcher resolved to "
            "another step, over the failing episodes with an omission; ambiguous probes on "
            "which the agent booked a work order, over the probes played.",
            "",
            markdown_table(header, rows),
        ]
    if a.corruption:
        header = ["arm", "configuration", "episodes", "fail", "events (spurious / lost / edge)",
                  "omissions: obeyed done / obeyed blocked / refused correct / other",
                  "single-event fatal (spurious / lost / edge)", "directives restored",
                  "bookings restored", "replay mismatches", "RNG mismatches"]  # fmt: skip
        rows = []
        for c in a.corruption:
            single = " / ".join(
                f"{c.single_fatal[k]}/{c.single_events[k]}" for k in c.single_events
            )
            rows.append([
                c.cell.arm, config_label(c.cell), str(c.episodes), str(c.failures),
                " / ".join(map(str, c.events.values())),
                " / ".join(map(str, c.omissions.values())), single,
                f"{c.directive_restored}/{c.directive_changed}",
                f"{c.booking_restored}/{c.booking_changed}", str(c.replay_mismatches),
                str(c.rng_mismatches),
            ])  # fmt: skip
        out += [
            "",
            "## Corrupted state replayed (Table 12 shape) and the receipts repair",
            "",
            "Corruptions injected (the corruption RNG re-drawn against the logged episodes), "
            "omissions attributed to the corrupted state's decision, how often a single "
            "corruption is fatal, and of the decisions the corruption changed, how many "
            "rebuilding the completion set from the admitted bookings restores (a "
            "decision-level counterfactual; dropped edges stay dropped). Replay mismatches: "
            "logged directives the corrupted replay does not reproduce; RNG mismatches: "
            "logged events the re-draw does not produce, plus drawn events the log lacks "
            "(0 on an honest log).",
            "",
            markdown_table(header, rows),
        ]
    if a.hybrid:
        header = ["configuration", "seeds", "flagged", "strict: enforce / directive / hybrid",
                  "omissions: enforce / directive / hybrid",
                  "correct refs refused (in flagged episodes)"]  # fmt: skip
        rows = [
            [config_label(h.cell), str(h.n), str(h.flagged),
             f"{h.enforce_successes} / {h.directive_successes} / {h.hybrid_successes}",
             f"{h.enforce_omissions} / {h.directive_omissions} / {h.hybrid_omissions}",
             f"{h.refused_correct} ({h.refused_correct_flagged})"]
            for h in a.hybrid
        ]  # fmt: skip
        out += [
            "",
            "## The validator-gated hybrid, offline (Appendix D.3)",
            "",
            "On the seeds both gates ran: the enforcement episode where the validator passes "
            "the compile, the directive-gate episode where it flags it.",
            "",
            markdown_table(header, rows),
        ]
    stress = spoof_section(a.spoof) + tool_failure_section(a.tool_failure)
    return out + stress + user_style_section(a.user_style)
