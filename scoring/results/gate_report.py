"""Per-cell reports of the gates' helpers, from logged episodes alone (pure).

* :func:`compile_table`: compile accuracy against the generator (Table 5 shape: dependency
  sets and codes per step, cancel / rewire / relax per episode) and the validator's verdicts
  (Table 10's "Defect" column), from ``EpisodeRecord.compile``.
* :func:`matcher_report`: matcher step agreement over ask and probe turns and the
  explicit-redo flag's precision and recall against the scripted legitimate redo (Table 11
  bottom), from ``TurnRecord.matched_step`` / ``matched_redo``; plus the matcher's calls made
  and served from the cache, and its outcome per consulted turn (answered, null, corrected,
  malformed) from ``TurnRecord.matcher_outcome``. Table 4's agreement is over "ask,
  premature, and redo turns" (the turns tier 2 rewrites: asks and re-asks, premature asks,
  redo probes; :data:`REWRITTEN_KINDS`), reported as ``rewritten_agreement``.
* :func:`gate_activity`: whether the gate did anything (compiles failed / empty / flagged,
  matcher answers malformed after correction, directives and notices shown); a cell whose
  gate never acted, or whose every compile failed, is ``inert`` with a line saying why.
  :func:`flag_inert` marks the contrasts an inert cell takes part in (``gate_inert``), so a
  report prints them as unmeasured, never as plain nulls (docs/results.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from protocol.records import CellKey, EpisodeRecord, TurnRecord
from scoring.plural import plural
from scoring.results.cells import cell_sort_key, config_of
from scoring.results.lines import (
    CompileSummary,
    ContrastLine,
    GateActivity,
    HelperLine,
    MatcherSummary,
    ResultLine,
)

__all__ = [
    "MATCHED_KINDS",
    "REWRITTEN_KINDS",
    "ActivityCounts",
    "CompileCounts",
    "MatcherCounts",
    "compile_table",
    "flag_inert",
    "gate_activity",
    "helper_lines",
    "judged",
    "matcher_report",
    "merged_activity",
]

# Turns on which agreement is measured: every turn that resolves to a scripted step.
MATCHED_KINDS = frozenset(
    {"ask", "premature", "redo_probe", "superseded_cue", "legit_redo", "re_ask"}
)
# Table 4's: the ask, premature and redo-probe turns (the wordings tier 2 rewrites).
REWRITTEN_KINDS = frozenset({"ask", "re_ask", "premature", "redo_probe"})


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def compile_table(records: Iterable[EpisodeRecord]) -> CompileSummary:
    """Compile accuracy and validator verdicts over the episodes that compiled."""
    counts = CompileCounts()
    for r in records:
        counts.add(r)
    return counts.summary()


class CompileCounts:
    """:func:`compile_table`'s counts over the records added, one at a time."""

    def __init__(self) -> None:
        self.n = self.steps = self.dep = self.code = self.cancel = self.rewire = 0
        self.relax = self.exact = self.flagged = 0
        self.flags: dict[str, int] = {}

    def add(self, r: EpisodeRecord) -> None:
        info = r.compile
        if info is None:
            return
        acc = info.accuracy
        self.n += 1
        self.steps += acc.steps
        self.dep += acc.dep
        self.code += acc.code
        self.cancel += acc.cancel
        self.rewire += acc.rewire
        self.relax += acc.relax
        self.exact += acc.exact
        if not info.validator.passed:
            self.flagged += 1
            flags = self.flags
            for f in info.validator.flags:
                flags[f] = flags.get(f, 0) + 1

    def summary(self) -> CompileSummary:
        n, steps = self.n, self.steps
        return CompileSummary(
            n=n,
            dep=_rate(self.dep, steps),
            code=_rate(self.code, steps),
            cancel=_rate(self.cancel, n),
            rewire=_rate(self.rewire, n),
            relax=_rate(self.relax, n),
            exact=_rate(self.exact, n),
            validator_flagged=self.flagged,
            flags=self.flags,
        )


def matcher_report(records: Iterable[EpisodeRecord]) -> MatcherSummary:
    """Matcher agreement and explicit-redo precision / recall over ``records``."""
    counts = MatcherCounts()
    for r in records:
        counts.add(r)
    return counts.summary()


class MatcherCounts:
    """:func:`matcher_report`'s counts over the records added, one at a time (each record's
    summed in locals, then added: integers, so the totals are the same in any grouping)."""

    def __init__(self) -> None:
        self.turns = self.agree = self.flagged = self.true_flags = self.redos = 0
        self.recalled = self.ambiguous = self.ambiguous_null = self.calls = self.cached = 0
        self.episodes = self.rewritten = self.rewritten_agree = 0
        self.outcomes = dict.fromkeys(("answered", "null", "corrected", "malformed"), 0)

    def add(self, r: EpisodeRecord) -> None:
        turns = agree = flagged = true_flags = redos = recalled = 0
        ambiguous = ambiguous_null = calls = cached = rewritten = rewritten_agree = 0
        outcomes = self.outcomes
        for t in r.turns:
            if t.matcher_outcome is not None:
                outcomes[t.matcher_outcome] += 1
            for c in t.calls:
                if c.role == "matcher":
                    calls += 1
                    cached += c.cached
            if t.matched_redo is None:  # the matcher did not run on this turn
                continue
            is_redo = t.kind == "legit_redo"
            if t.kind in MATCHED_KINDS:
                turns += 1
                agree += t.matched_step == t.step
            if t.kind in REWRITTEN_KINDS:
                rewritten += 1
                rewritten_agree += t.matched_step == t.step
            if t.kind == "ambiguous":
                ambiguous += 1
                ambiguous_null += t.matched_step is None
            flagged += t.matched_redo
            true_flags += t.matched_redo and is_redo and t.matched_step == t.step
            redos += is_redo
            recalled += is_redo and t.matched_redo
        self.episodes += 1
        self.turns += turns
        self.agree += agree
        self.flagged += flagged
        self.true_flags += true_flags
        self.redos += redos
        self.recalled += recalled
        self.ambiguous += ambiguous
        self.ambiguous_null += ambiguous_null
        self.calls += calls
        self.cached += cached
        self.rewritten += rewritten
        self.rewritten_agree += rewritten_agree

    def summary(self) -> MatcherSummary:
        return MatcherSummary(
            episodes=self.episodes,
            turns=self.turns,
            agree=self.agree,
            agreement=_rate(self.agree, self.turns),
            rewritten_turns=self.rewritten,
            rewritten_agree=self.rewritten_agree,
            rewritten_agreement=_rate(self.rewritten_agree, self.rewritten),
            redo_flags=self.flagged,
            redo_turns=self.redos,
            redo_precision=_rate(self.true_flags, self.flagged),
            redo_recall=_rate(self.recalled, self.redos),
            ambiguous=self.ambiguous,
            ambiguous_null=self.ambiguous_null,
            matcher_calls=self.calls,
            matcher_cached=self.cached,
            outcomes=self.outcomes,
        )


def _acted(t: TurnRecord) -> bool:
    """The gate showed the agent something on this turn, or refused one of its bookings."""
    return bool(t.directive or t.arm_text or t.notices or t.retry_notices or t.refused)


def gate_activity(records: Sequence[EpisodeRecord]) -> GateActivity:
    """What a gate cell's gate did over ``records`` (completed episodes of one cell).

    Inert: no turn of any episode showed a directive (or any arm text) or a rejection
    notice, or refused a booking; or every compile failed (the gate then acts, if at all,
    on a graph it could not read). ``why`` says which, with the counts behind it."""
    counts = ActivityCounts()
    for r in records:
        counts.add(r)
    return counts.summary()


class ActivityCounts:
    """:func:`gate_activity`'s counts over the records added, one at a time."""

    def __init__(self) -> None:
        self.episodes = self.compiles = self.failed = self.empty = self.flagged = 0
        self.consulted = self.malformed = self.directives = self.notices = 0
        self.arm_turns = self.acted = 0
        self.errors: dict[str, int] = {}

    def add(self, r: EpisodeRecord) -> None:
        self.episodes += 1
        info = r.compile
        if info is not None:
            self.compiles += 1
            self.failed += info.graph_error is not None or info.revision_error is not None
            self.empty += not info.graph
            self.flagged += not info.validator.passed
            errors = self.errors
            for e in (info.graph_error, info.revision_error):
                if e is not None:
                    errors[e] = errors.get(e, 0) + 1
        consulted = malformed = directives = notices = arm_turns = acted = 0
        for t in r.turns:
            consulted += t.matcher_outcome is not None
            malformed += t.matcher_outcome == "malformed"
            directives += t.directive is not None
            notices += len(t.notices) + len(t.retry_notices)
            arm_turns += bool(t.arm_text)
            acted += _acted(t)
        self.consulted += consulted
        self.malformed += malformed
        self.directives += directives
        self.notices += notices
        self.arm_turns += arm_turns
        self.acted += acted

    def merge(self, g: GateActivity) -> None:
        """Add the counts behind ``g`` (another group of records' :meth:`summary`)."""
        self.episodes += g.episodes
        self.compiles += g.compiles
        self.failed += g.compile_failed
        self.empty += g.compile_empty
        self.flagged += g.compile_flagged
        for e, n in g.compile_errors.items():
            self.errors[e] = self.errors.get(e, 0) + n
        self.consulted += g.matcher_turns
        self.malformed += g.matcher_malformed
        self.directives += g.directives
        self.notices += g.notices
        self.arm_turns += g.arm_turns
        self.acted += g.acted_turns

    def summary(self) -> GateActivity:
        return judged(
            GateActivity(
                episodes=self.episodes,
                compiles=self.compiles,
                compile_failed=self.failed,
                compile_empty=self.empty,
                compile_flagged=self.flagged,
                compile_errors=self.errors,
                matcher_turns=self.consulted,
                matcher_malformed=self.malformed,
                directives=self.directives,
                notices=self.notices,
                arm_turns=self.arm_turns,
                acted_turns=self.acted,
            )
        )


def judged(g: GateActivity) -> GateActivity:
    """``g`` with ``inert`` and ``why`` set from its counts (see :func:`gate_activity`)."""
    why: list[str] = []
    if g.episodes and not g.acted_turns:
        shown = plural(g.episodes, "episode")
        why.append(f"no directive, arm text or rejection notice shown in {shown}")
    if g.compiles and g.compile_failed == g.compiles:
        why.append(f"{g.compile_failed}/{g.compiles} compiles failed")
    inert = bool(why)
    if inert:
        why += [f"{n}x {e}" for e, n in sorted(g.compile_errors.items())]
        if g.matcher_turns and g.matcher_malformed:
            why.append(
                f"{g.matcher_malformed}/{g.matcher_turns} matcher answers malformed after "
                "correction"
            )
    return msgspec.structs.replace(
        g, inert=inert, why="gate inert: " + "; ".join(why) if inert else None
    )


def merged_activity(parts: Iterable[GateActivity]) -> GateActivity:
    """The activity of a cell from its episodes' (each :func:`gate_activity` of one record):
    the counts summed, then judged as one."""
    counts = ActivityCounts()
    for g in parts:
        counts.merge(g)
    return counts.summary()


def flag_inert(lines: Sequence[ResultLine]) -> list[ResultLine]:
    """``lines`` with each contrast naming the arms whose gate was inert (``gate_inert``),
    from the helpers lines among them; other lines unchanged."""
    inert = {
        (config_of(h.cell), h.cell.arm) for h in lines if isinstance(h, HelperLine) and h.gate.inert
    }
    if not inert:
        return list(lines)
    out: list[ResultLine] = []
    for x in lines:
        if isinstance(x, ContrastLine):
            arms = tuple(a for a in (x.a, x.b) if (x.config, a) in inert)
            if arms:
                x = msgspec.structs.replace(x, gate_inert=arms)
        out.append(x)
    return out


def helper_lines(records: Iterable[EpisodeRecord]) -> list[HelperLine]:
    """One ``type: "helpers"`` line per gate cell (a cell whose episodes compiled or ran
    the matcher): compile accuracy (Table 5 shape) and matcher agreement (Table 11 shape)."""
    by_cell: dict[CellKey, list[EpisodeRecord]] = {}
    for r in records:
        if r.termination == "completed":
            by_cell.setdefault(r.cell, []).append(r)
    out: list[HelperLine] = []
    for key in sorted(by_cell, key=cell_sort_key):
        recs = by_cell[key]
        compiled = compile_table(recs)
        matcher = matcher_report(recs)
        if compiled.n == 0 and matcher.turns == 0:
            continue
        gate = gate_activity(recs)
        out.append(HelperLine(cell=key, compile=compiled, matcher=matcher, gate=gate))
    return out
