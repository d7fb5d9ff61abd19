"""Table 12 and the receipts-repair counterfactual (Appendix D.4), from logged episodes (pure).

"Table 12 replays the corruption RNG of the corrupted-state ablation (Section 5) against the
logged episodes to count the corruptions actually injected and attribute each failure." The
replay re-draws the stream with the arm's own code (:mod:`protocol.stress.corruption`: the same seed,
the same per-turn draw) on the compiled state rebuilt turn by turn as the gate ran it, so the
draw sees the same steps, edges and done set at each turn. The logged events
(``EpisodeRecord.corruptions``: the turn, the step, a dropped edge, a lost or a spurious done
bit) are the cross-check: ``rng_mismatches`` counts the logged events the re-draw does not
produce plus the drawn ones the log lacks (0 on every honest log). Every log carries the
events (schema 1 logged them as plain objects, read into the same shape), so there is no
fallback to take. For each corrupted cell (``knobs.corruption > 0``) with a compile record:

* Events: corruptions injected (re-drawn), per kind, and per episode.
* Failures: every omission of the primary scoring attributed to the corrupted state's
  decision on its turn: ``refused_correct`` (the agent's correct booking was refused),
  ``obeyed_done`` (an already DONE directive for the step, obeyed), ``obeyed_blocked`` (a
  BLOCKED one, obeyed), else ``other``.
* Single-event episodes: for episodes with exactly one corruption, how often each kind is
  fatal (the episode is not a strict success).
* Receipts repair: the compiled state is replayed three ways, turn by turn as the gate ran it
  (the compiled revision on the revision turn, then the turn's draw, the matcher's
  explicit-redo authorization, the admitted bookings after the turn): *corrupted* (the
  re-drawn events applied as drawn: it reproduces the logged directives, and
  ``replay_mismatches`` counts those it does not), *clean* (no event) and *repaired* (the
  completion set rebuilt from the append-only log of admitted bookings, so only dropped edges
  remain). A decision is a directive issued on a matched turn, and (enforcing cells) the
  admit-or-refuse verdict on each booking attempt. A decision is corruption-changed when the
  corrupted and clean states decide differently, and restored when the repaired state decides
  as the clean one. This is a decision-level counterfactual: turns after a repaired decision
  are the logged ones, not replayed.

The compute is a :class:`~scoring.analyses.base.Fold`: each corrupted episode gives its cell
and its tallies (its replay run while its record is in hand), and the batch's lines sum them
per cell.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

import msgspec

from protocol.arms.render import render_directive
from protocol.arms.table import enforced
from protocol.config import config_label
from protocol.records import CellKey, CompileRecord, CorruptionEvent, EpisodeRecord, TurnRecord
from protocol.state.compiled import CompiledGraph, CompiledStep, code_table
from protocol.state.machine import TaskState
from protocol.state.receipts import normalize_code
from protocol.stress.budget import cell_episode
from protocol.stress.corruption import corruption_rng, draw_corruptions
from scoring.analyses.base import Analysis, Fold, Pair, by_cell, markdown_section
from scoring.analyses.tallies import Tallied, by_cell_sums
from scoring.replay.directive_kinds import parse_directive
from scoring.replay.episode_score import EpisodeScore
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import cell_sort_key

__all__ = [
    "CORRUPTION",
    "CORRUPTION_KINDS",
    "CorruptionLine",
    "EventSource",
    "corruption_lines",
    "redrawn_events",
]

CORRUPTION_KINDS = ("spurious_done", "lost_done", "drop_edge")
EventSource = Literal["redraw", "logged"]
FAILURE_KINDS = ("obeyed_done", "obeyed_blocked", "refused_correct", "other")


class CorruptionLine(msgspec.Struct, frozen=True, kw_only=True, tag="corruption"):
    cell: CellKey
    epsilon: float
    episodes: int
    failures: int  # episodes that are not a strict success
    events: dict[str, int]  # corruptions injected per kind, every kind present
    omissions: dict[str, int]  # omission attribution, every kind of FAILURE_KINDS present
    single_events: dict[str, int]  # single-event episodes per kind of their one event
    single_fatal: dict[str, int]  # ... of them not a strict success
    directive_changed: int  # directives the corruption changed
    directive_restored: int  # ... the receipts-rebuilt completion set restores
    booking_changed: int  # admit / refuse verdicts the corruption changed (enforcing)
    booking_restored: int
    replay_mismatches: int  # logged directives the corrupted replay does not reproduce
    rng_mismatches: int  # logged events the re-draw lacks + drawn events the log lacks


def _graph(info: CompileRecord) -> CompiledGraph:
    return CompiledGraph(
        steps={s.id: CompiledStep(deps=s.deps, code=s.code) for s in info.graph},
        error=info.graph_error,
    )


def _apply(state: TaskState, event: CorruptionEvent, *, done_bits: bool) -> None:
    if event.kind == "drop_edge":
        if event.edge is not None and event.step in state.deps:
            state.deps[event.step] = state.deps[event.step] - {event.edge}
    elif done_bits and event.kind == "lost_done":
        state.done.discard(event.step)
    elif done_bits:
        state.done.add(event.step)


def _refused(state: TaskState, v: str | None) -> bool:
    if v is None:
        return False
    status = state.status(v)
    return status in ("cancelled", "blocked") or (status == "done" and v not in state.authorized)


class _Replay:
    """The three replays of one episode's compiled state."""

    def __init__(
        self, record: EpisodeRecord, info: CompileRecord, enforcing: bool, source: EventSource
    ) -> None:
        cell = record.cell
        self.epsilon = cell.knobs.corruption
        self.rng = corruption_rng(record.spec, cell.model, cell.regime, self.epsilon)
        self.drawn: list[CorruptionEvent] = []
        graph = _graph(info)
        self.codes = code_table(graph)
        self.revision = info.revision
        deps = {v: s.deps for v, s in graph.steps.items()}
        self.corrupt, self.clean, self.repaired = TaskState(deps), TaskState(deps), TaskState(deps)
        # the state the RNG is re-drawn on: the corrupted one itself, or (logged events
        # applied) a shadow of the gate under the re-drawn stream
        self.redraw = source == "redraw"
        self.drawing = self.corrupt if self.redraw else TaskState(deps)
        self.enforcing = enforcing
        self.counts = dict.fromkeys(
            ("directive_changed", "directive_restored", "booking_changed", "booking_restored",
             "replay_mismatches", "rng_mismatches"), 0)  # fmt: skip

    def _states(self) -> tuple[TaskState, TaskState, TaskState]:
        return self.corrupt, self.clean, self.repaired

    def _every(self) -> tuple[TaskState, ...]:
        return self._states() if self.redraw else (*self._states(), self.drawing)

    def turn(self, t: TurnRecord, logged: list[CorruptionEvent]) -> None:
        if t.kind == "revision":
            rev = self.revision
            for s in self._every():
                s.apply_revision(rev.cancel, rev.rewires, rev.relax)
        # the gate's draw, at the same point of the turn (runner.arms.gates.DirectiveGate.shape)
        events = draw_corruptions(self.drawing, self.rng, self.epsilon, t.index, t.kind)
        self.drawn.extend(events)
        if not self.redraw:
            events = logged
            for e in events:
                _apply(self.corrupt, e, done_bits=True)
        for e in events:
            _apply(self.repaired, e, done_bits=False)
        step = t.matched_step
        for s in self._states():
            s.begin_turn(step if step is not None and t.matched_redo else None)
        if step is not None and step in self.corrupt.deps:
            dc, dk, dr = (render_directive(step, s.verdict(step)) for s in self._states())
            self.counts["replay_mismatches"] += t.directive is not None and dc != t.directive
            if dc != dk:
                self.counts["directive_changed"] += 1
                self.counts["directive_restored"] += dr == dk
        if self.enforcing:
            views = [s.copy() for s in self._states()]
            for b in (*t.admitted, *t.refused):
                code = normalize_code(b.code)
                v = self.codes.get(code) if code is not None else None
                bc, bk, br = (_refused(s, v) for s in views)
                if bc != bk:
                    self.counts["booking_changed"] += 1
                    self.counts["booking_restored"] += br == bk
                if v is not None and b in t.admitted:
                    for s in views:
                        s.book(v)
        for b in t.admitted:
            code = normalize_code(b.code)
            v = self.codes.get(code) if code is not None else None
            if v is not None:
                for s in self._every():
                    s.book(v)


def redrawn_events(record: EpisodeRecord) -> list[CorruptionEvent]:
    """The corruptions the gate's RNG injects into ``record``'s compiled state, re-drawn
    against its logged turns ([] for an uncorrupted or uncompiled episode)."""
    if record.cell.knobs.corruption <= 0 or record.compile is None:
        return []
    replay = _Replay(record, record.compile, False, "redraw")
    for t in record.turns:
        replay.turn(t, [])
    return replay.drawn


def _omission_kind(t: TurnRecord, step: str, code: str) -> str:
    if any(b.code == code and b.work_order == t.work_order for b in t.refused):
        return "refused_correct"
    d = parse_directive(t.directive)
    if d is not None and d.step == step and d.kind in ("done", "blocked"):
        return f"obeyed_{d.kind}"
    return "other"


# What one counted corrupted episode gives: its cell and its tallies, in this order
_DECISIONS = ("directive_changed", "directive_restored", "booking_changed", "booking_restored",
              "replay_mismatches", "rng_mismatches")  # fmt: skip
_EVENTS, _OMISSIONS, _SINGLE, _FATAL = 2, 5, 9, 12  # where each kind's tallies start
_DECIDED = 15  # then the decisions
_N = _DECIDED + len(_DECISIONS)  # episodes, failures, 3 events, 4 omissions, 3 + 3 single
_KIND = {kind: i for i, kind in enumerate(CORRUPTION_KINDS)}
_FAILURE = {kind: i for i, kind in enumerate(FAILURE_KINDS)}


def _each(pair: Pair, cache: EpisodeCache, source: EventSource = "redraw") -> Tallied | None:
    record, score = pair
    if record.cell.knobs.corruption <= 0 or not score.counted or record.compile is None:
        return None
    return (record.cell, _tallies(record, score, cache, source))


def _each_logged(pair: Pair, cache: EpisodeCache) -> Tallied | None:
    return _each(pair, cache, "logged")


def _whole(episodes: list[Tallied]) -> list[CorruptionLine]:
    """One line per corrupted cell, from its episodes' tallies."""
    acc = by_cell_sums(episodes)
    return [_line(cell, acc[cell]) for cell in sorted(acc, key=cell_sort_key)]


_FOLDS: dict[EventSource, Fold[Tallied, CorruptionLine]] = {
    "redraw": Fold(_each, _whole),
    "logged": Fold(_each_logged, _whole),
}


def corruption_lines(
    pairs: Iterable[Pair],
    episodes: EpisodeCache | None = None,
    *,
    source: EventSource = "redraw",
) -> list[CorruptionLine]:
    """One line per corrupted cell (scores need per-turn detail).

    ``source="redraw"`` (Table 12): the events are the re-drawn stream. ``"logged"``: the
    logged events are applied and counted instead (the cross-check's other side, and how a
    test places events by hand); ``rng_mismatches`` is the same comparison either way."""
    cache = episodes if episodes is not None else EpisodeCache()
    return list(_FOLDS[source](pairs, cache))


def _tallies(
    record: EpisodeRecord, score: EpisodeScore, cache: EpisodeCache, source: EventSource
) -> tuple[int, ...]:
    """One corrupted episode's tallies (see ``_N``)."""
    assert record.compile is not None
    cell = record.cell
    failed = not score.primary.success
    a = [0] * _N
    a[0], a[1] = 1, failed
    episode = cell_episode(cache.get(record.spec), record.cell.knobs)  # its rules (#48)
    enforcing = enforced(cell.arm, record.compile.enforcing)
    replay = _Replay(record, record.compile, enforcing, source)
    by_turn: dict[int, list[CorruptionEvent]] = {}
    for e in record.corruptions:
        by_turn.setdefault(e.turn, []).append(e)
    for t in record.turns:
        replay.turn(t, by_turn.get(t.index, []))
    drawn, logged = Counter(replay.drawn), Counter(record.corruptions)
    replay.counts["rng_mismatches"] = (drawn - logged).total() + (logged - drawn).total()
    events = replay.drawn if source == "redraw" else list(record.corruptions)
    for e in events:
        a[_EVENTS + _KIND[e.kind]] += 1
    if len(events) == 1:
        kind = _KIND[events[0].kind]
        a[_SINGLE + kind] += 1
        a[_FATAL + kind] += failed
    for t, s in zip(record.turns, score.primary.turns, strict=False):
        for err in s.errors:
            if err.channel == "omission":
                code = episode.step(err.step).code
                a[_OMISSIONS + _FAILURE[_omission_kind(t, err.step, code)]] += 1
    for i, k in enumerate(_DECISIONS, _DECIDED):
        a[i] = replay.counts[k]
    return tuple(a)


def _line(cell: CellKey, a: tuple[int, ...]) -> CorruptionLine:
    def kinds(at: int, names: tuple[str, ...]) -> dict[str, int]:
        return dict(zip(names, a[at : at + len(names)], strict=True))

    return CorruptionLine(
        cell=cell,
        epsilon=cell.knobs.corruption,
        episodes=a[0],
        failures=a[1],
        events=kinds(_EVENTS, CORRUPTION_KINDS),
        omissions=kinds(_OMISSIONS, FAILURE_KINDS),
        single_events=kinds(_SINGLE, CORRUPTION_KINDS),
        single_fatal=kinds(_FATAL, CORRUPTION_KINDS),
        **kinds(_DECIDED, _DECISIONS),
    )


def _markdown(lines: tuple[CorruptionLine, ...]) -> list[str]:
    header = ["arm", "configuration", "episodes", "fail", "events (spurious / lost / edge)",
              "omissions: obeyed done / obeyed blocked / refused correct / other",
              "single-event fatal (spurious / lost / edge)", "directives restored",
              "bookings restored", "replay mismatches", "RNG mismatches"]  # fmt: skip
    rows = []
    for c in lines:
        single = " / ".join(f"{c.single_fatal[k]}/{c.single_events[k]}" for k in c.single_events)
        rows.append([
            c.cell.arm, config_label(c.cell), str(c.episodes), str(c.failures),
            " / ".join(map(str, c.events.values())),
            " / ".join(map(str, c.omissions.values())), single,
            f"{c.directive_restored}/{c.directive_changed}",
            f"{c.booking_restored}/{c.booking_changed}", str(c.replay_mismatches),
            str(c.rng_mismatches),
        ])  # fmt: skip
    return markdown_section(
        "Corrupted state replayed (Table 12 shape) and the receipts repair",
        "Corruptions injected (the corruption RNG re-drawn against the logged episodes), "
        "omissions attributed to the corrupted state's decision, how often a single "
        "corruption is fatal, and of the decisions the corruption changed, how many "
        "rebuilding the completion set from the admitted bookings restores (a "
        "decision-level counterfactual; dropped edges stay dropped). Replay mismatches: "
        "logged directives the corrupted replay does not reproduce; RNG mismatches: "
        "logged events the re-draw does not produce, plus drawn events the log lacks "
        "(0 on an honest log).",
        header,
        rows,
    )


CORRUPTION: Analysis[CorruptionLine, CorruptionLine] = Analysis(
    name="corruption",
    table="Table 12",
    compute=_FOLDS["redraw"],
    finish=by_cell,
    markdown=_markdown,
)
