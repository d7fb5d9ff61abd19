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
"""

from __future__ import annotations

from collections.abc import Iterable

from protocol.records import CellKey, EpisodeRecord
from scoring.results.cells import cell_sort_key
from scoring.results.lines import CompileSummary, HelperLine, MatcherSummary

__all__ = ["MATCHED_KINDS", "REWRITTEN_KINDS", "compile_table", "helper_lines", "matcher_report"]

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
    n = steps = dep = code = cancel = rewire = relax = exact = flagged = 0
    flags: dict[str, int] = {}
    for r in records:
        info = r.compile
        if info is None:
            continue
        acc = info.accuracy
        n += 1
        steps += acc.steps
        dep += acc.dep
        code += acc.code
        cancel += acc.cancel
        rewire += acc.rewire
        relax += acc.relax
        exact += acc.exact
        if not info.validator.passed:
            flagged += 1
            for f in info.validator.flags:
                flags[f] = flags.get(f, 0) + 1
    return CompileSummary(
        n=n,
        dep=_rate(dep, steps),
        code=_rate(code, steps),
        cancel=_rate(cancel, n),
        rewire=_rate(rewire, n),
        relax=_rate(relax, n),
        exact=_rate(exact, n),
        validator_flagged=flagged,
        flags=flags,
    )


def matcher_report(records: Iterable[EpisodeRecord]) -> MatcherSummary:
    """Matcher agreement and explicit-redo precision / recall over ``records``."""
    turns = agree = flagged = true_flags = redos = recalled = 0
    ambiguous = ambiguous_null = calls = cached = episodes = rewritten = rewritten_agree = 0
    outcomes = dict.fromkeys(("answered", "null", "corrected", "malformed"), 0)
    for r in records:
        episodes += 1
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
    return MatcherSummary(
        episodes=episodes,
        turns=turns,
        agree=agree,
        agreement=_rate(agree, turns),
        rewritten_turns=rewritten,
        rewritten_agree=rewritten_agree,
        rewritten_agreement=_rate(rewritten_agree, rewritten),
        redo_flags=flagged,
        redo_turns=redos,
        redo_precision=_rate(true_flags, flagged),
        redo_recall=_rate(recalled, redos),
        ambiguous=ambiguous,
        ambiguous_null=ambiguous_null,
        matcher_calls=calls,
        matcher_cached=cached,
        outcomes=outcomes,
    )


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
        out.append(HelperLine(cell=key, compile=compiled, matcher=matcher))
    return out
