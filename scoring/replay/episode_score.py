"""Scoring one logged episode: replay it against its regenerated ground truth.

``score_episode(record)`` regenerates the episode from ``record.spec``, replays every logged
turn through a fresh :class:`protocol.ScriptedUser` (the one state machine: labels, the six
error channels and the realized state all come from :mod:`protocol.state.machine`), and returns an
:class:`EpisodeScore`. No model, no I/O.

Scoring decisions, kept everywhere (tests: ``tests/scoring/replay/test_replay.py``):

1. Executions are re-parsed from the logged text (:mod:`scoring.replay.bookings` lists the parsing
   rules: current work order, known code, ACTION lines for tool cells, same-turn
   ``first_reply``, refused bookings removed, one execution per step per turn, citations).
2. Two scorings. The *primary* scoring counts every booking; the *decline-aware* scoring
   (Appendix A.2) does not count bookings that are citations. Each scoring has its own
   realized state: a booking enters the realized state of the scorings that count it as an
   execution, so labels of later turns follow each scoring's own executions (dynamic ground
   truth). When no booking of an episode is a citation the two replays are identical and the
   decline-aware result is the primary one.
3. The turns replayed are the logged turns, in order, each rebuilt as a protocol ``Turn``
   (index, kind, step, work order, user text, named steps, dynamic flag). Each scoring replays
   the same logged turns; a dynamic re-ask that only the decline-aware realized state would
   have caused is not invented (no reply exists for it).
4. A turn's label is its verdict at the start of the turn (after the revision on the revision
   turn): ``eligible``, ``blocked``, ``done``, ``cancelled``, ``redo``, or ``none`` when the
   turn resolves to no step (fillers, the revision, ambiguous probes). An ambiguous probe
   on which the gate asked and the user's logged answer named the step it meant asks for that
   step (issue #46, ``protocol.arms.askback.answered_step``): its label is that step's
   verdict; logs before that rule hold "None of those" there and rescore unchanged.
5. Strict success: no error in any channel on any turn. Per-turn accuracy: turns without an
   error over all replayed turns (reported, never used for a claim).
6. Infrastructure: ``record.termination`` neither ``completed`` nor one of
   :data:`protocol.records.MODEL_FAILURES`. Such an episode is replayed for the record but is
   never a success, and aggregation leaves it out of ``n`` and success counts and reports it
   as an infrastructure error. A model failure (``context_overflow``, #40) is counted: in
   ``n``, never a success under either scoring, and reported in its own column.
7. Consistency (:mod:`scoring.replay.consistency`): logged turns are compared with the episode
   (kind, step, work order, named steps, dynamic flag, position, and the text when the episode
   was regenerated with its own wording). Differences are reported in ``mismatches`` (at most
   ``MAX_MISMATCHES`` messages), never raised; a completed episode whose schedule has turns
   left is a mismatch too. A spec the generator cannot regenerate makes the episode
   unscorable (``scorable=False``), reported, not raised.
8. ``admitted_diffs`` counts turns whose re-parsed primary bookings differ from the bookings
   the log says the world admitted (a parser or rule change since the run).
9. Tool-harness cells (``knobs.harness == "langgraph"``) are read from their logged tool
   calls and workspace stamps (:mod:`scoring.replay.harness`) instead of re-parsed ref lines; the
   replay, labels and channels are the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from protocol.arms.askback import answered_step
from protocol.config import UserStyle
from protocol.episode.generate import generate
from protocol.episode.versions import SpecError
from protocol.records import (
    MODEL_FAILURES,
    CellKey,
    Episode,
    EpisodeRecord,
    Turn,
    TurnKind,
)
from protocol.state.machine import CHANNELS, Error
from protocol.stress.budget import cell_episode
from protocol.user import ScriptedUser
from scoring.replay.askback import Burden, burden_of
from scoring.replay.bookings import NOTHING, TurnBookings
from scoring.replay.consistency import (
    MAX_MISMATCHES,
    ScheduleChecker,
    as_planned,
    planned_mismatches,
)
from scoring.replay.cuts import record_cuts
from scoring.replay.turn_reads import admitted_diffs, read_turns

__all__ = [
    "LABELS",
    "MAX_MISMATCHES",
    "EpisodeScore",
    "Replays",
    "Scoring",
    "TurnScore",
    "score_episode",
]

LABELS: tuple[str, ...] = ("eligible", "blocked", "done", "cancelled", "redo", "none")


class TurnScore(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    index: int
    kind: TurnKind
    step: str | None
    label: str  # one of LABELS
    executed: tuple[str, ...]
    errors: tuple[Error, ...]


class Scoring(msgspec.Struct, frozen=True, kw_only=True):
    """One scoring's verdict on one episode."""

    success: bool  # strict episode success
    channels: dict[str, int]  # errors per channel, every channel present
    labels: dict[str, int]  # turns per label, every label present
    turns_ok: int  # turns without an error
    n_turns: int  # turns replayed
    turns: tuple[TurnScore, ...]  # per-turn detail (empty when scored with detail=False)

    @property
    def errors(self) -> int:
        return sum(self.channels.values())


class EpisodeScore(msgspec.Struct, frozen=True, kw_only=True):
    cell: CellKey
    seed: int
    termination: str
    infrastructure: bool
    scorable: bool
    primary: Scoring
    decline_aware: Scoring
    refused: int  # distinct bookings the gate refused
    false_completions: int  # refused bookings whose visible reply has no refusal language
    citations: int  # primary executions the decline-aware scoring reads as citations
    redisplays: int  # stale-work-order refs
    unknown: int  # current-work-order refs with an unknown code (or unknown tool)
    admitted_diffs: int
    mismatches: tuple[str, ...]
    # the user's burden under the ask-back knobs (scoring.replay.askback); None when off
    burden: Burden | None = None
    trial: int = 0  # which trial of its seed (--trials, #40); 0 without repeated trials
    # replies cut at their token budget per role that made a request: (cut, made) (#49;
    # scoring.replay.cuts.record_cuts)
    cut: dict[str, tuple[int, int]] = {}

    @property
    def unit(self) -> tuple[int, int]:
        """(seed, trial): the episode's place in its cell."""
        return (self.seed, self.trial)

    @property
    def counted(self) -> bool:
        """Counted in ``n`` and success counts: scorable and not an infrastructure error."""
        return self.scorable and not self.infrastructure

    @property
    def model_failure(self) -> bool:
        """Ended on the model's failure (a context overflow): counted, never a success."""
        return self.termination in MODEL_FAILURES


def _empty_scoring() -> Scoring:
    return Scoring(
        success=False,
        channels=dict.fromkeys(map(str, CHANNELS), 0),
        labels=dict.fromkeys(LABELS, 0),
        turns_ok=0,
        n_turns=0,
        turns=(),
    )


_Check = Callable[[ScriptedUser, Turn], None]  # called before each turn is begun


def _replay(
    user: ScriptedUser,
    turns: Sequence[Turn],
    executed: Sequence[tuple[str, ...]],
    check: _Check | None,
    infrastructure: bool,
    detail: bool,
    answered: Sequence[str | None],
) -> Scoring:
    channels: dict[str, int] = dict.fromkeys(CHANNELS, 0)
    labels = dict.fromkeys(LABELS, 0)
    ok = 0
    scored: list[TurnScore] = []
    for turn, steps, meant in zip(turns, executed, answered, strict=True):
        if check is not None:
            check(user, turn)
        verdict = user.begin(turn)
        if meant is not None:  # an ambiguous probe the user's answer resolved (#46)
            turn, verdict = user.resolve(turn, meant)
        errors = user.finish(turn, verdict, steps)
        label = "none" if verdict is None else verdict.label
        # a rule's label and channel (issue #48) appear only in episodes that have them
        labels[label] = labels.get(label, 0) + 1
        for e in errors:
            channels[e.channel] = channels.get(e.channel, 0) + 1
        ok += not errors
        if detail:
            scored.append(
                TurnScore(
                    index=turn.index,
                    kind=turn.kind,
                    step=turn.step,
                    label=label,
                    executed=steps,
                    errors=tuple(errors),
                )
            )
    return Scoring(
        success=ok == len(turns) and not infrastructure,
        channels=channels,
        labels=labels,
        turns_ok=ok,
        n_turns=len(turns),
        turns=tuple(scored),
    )


_ReplayKey = tuple[
    int,
    UserStyle,
    tuple[Turn, ...] | None,  # None: the episode's own turns
    tuple[tuple[str, ...], ...],
    bool,
    bool,
    tuple[str | None, ...],
]


class Replays:
    """Replays already made, keyed by their inputs: the episode (by identity, checked), the
    user's style, the turns, the steps each turn executed, the infrastructure flag, the
    detail flag and the steps the user's answers resolved. A replay with no schedule check is a pure function of those, so the arms
    and models of a grid that executed the same steps on the same episode share one (strong
    agents play many episodes perfectly under every arm). Pass one to :func:`score_episode`
    per batch. ``maxsize``: at most that many, the oldest dropped (#47); None keeps all."""

    __slots__ = ("_done", "maxsize")

    def __init__(self, *, maxsize: int | None = None) -> None:
        self._done: dict[_ReplayKey, tuple[Episode, Scoring]] = {}
        self.maxsize = maxsize

    def replay(
        self,
        episode: Episode,
        style: UserStyle,
        turns: Sequence[Turn],
        executed: Sequence[tuple[str, ...]],
        infrastructure: bool,
        detail: bool,
        answered: Sequence[str | None],
    ) -> Scoring:
        key = (
            id(episode),
            style,
            # the episode's own turns (a log played to its end, :func:`as_planned`): known by
            # identity, not hashed turn by turn (#50)
            None if turns is episode.turns else tuple(turns),
            tuple(executed),
            infrastructure,
            detail,
            tuple(answered),
        )
        hit = self._done.get(key)
        if hit is not None and hit[0] is episode:
            return hit[1]
        user = ScriptedUser(episode, style)
        scoring = _replay(user, turns, executed, None, infrastructure, detail, answered)
        if self.maxsize is not None and len(self._done) >= self.maxsize:  # drop the oldest
            del self._done[next(iter(self._done))]
        self._done[key] = (episode, scoring)
        return scoring


def _fresh_replay(
    episode: Episode,
    style: UserStyle,
    turns: Sequence[Turn],
    executed: Sequence[tuple[str, ...]],
    infrastructure: bool,
    detail: bool,
    replays: Replays | None,
    answered: Sequence[str | None],
) -> Scoring:
    if replays is not None:
        return replays.replay(episode, style, turns, executed, infrastructure, detail, answered)
    user = ScriptedUser(episode, style)
    return _replay(user, turns, executed, None, infrastructure, detail, answered)


def _is_infrastructure(termination: str) -> bool:
    return termination != "completed" and termination not in MODEL_FAILURES


def _unscorable(record: EpisodeRecord, why: str) -> EpisodeScore:
    empty = _empty_scoring()
    return EpisodeScore(
        cell=record.cell,
        seed=record.spec.seed,
        trial=record.trial,
        termination=record.termination,
        infrastructure=_is_infrastructure(record.termination),
        scorable=False,
        primary=empty,
        decline_aware=empty,
        refused=0,
        false_completions=0,
        citations=0,
        redisplays=0,
        unknown=0,
        admitted_diffs=0,
        mismatches=(f"cannot regenerate the episode: {why}",),
        cut=record_cuts(record),
    )


def _answered(episode: Episode, turns: Sequence[Turn], record: EpisodeRecord) -> list[str | None]:
    """Per turn, the step an ambiguous probe the user's logged answer resolved asks for
    (#46); a turn with no answer asks for none (answered_step's None, without the call)."""
    return [
        None if r.answer is None else answered_step(episode, t, r.answer)
        for t, r in zip(turns, record.turns, strict=True)
    ]


def _cites(booked: Sequence[TurnBookings]) -> bool:
    """Whether some turn's decline-aware steps are not its primary ones."""
    return any(r.decline_aware != r.primary for r in booked)


def score_episode(
    record: EpisodeRecord,
    episode: Episode | None = None,
    *,
    detail: bool = True,
    replays: Replays | None = None,
) -> EpisodeScore:
    """Score one logged episode (see the module docstring for every rule).

    *episode* is ``protocol.episode.generate(record.spec)``; pass it from a cache
    (:class:`scoring.replay.ground_truth.EpisodeCache`) when scoring many records, and a
    :class:`Replays` to share identical replays between them. ``detail=False`` leaves out the
    per-turn scores (a compact score; aggregation needs none of them).
    """
    if episode is None:
        try:
            episode = generate(record.spec)
        except SpecError as e:
            return _unscorable(record, str(e))
    episode = cell_episode(episode, record.cell.knobs)  # the rules its knobs place (#48)
    read = read_turns(record, episode)
    turns: Sequence[Turn] = [t.as_turn() for t in record.turns]
    answered = _answered(episode, turns, record)
    # ended: no success (infrastructure or the model's failure); completed: ran to the end
    ended = record.termination != "completed"
    infrastructure = _is_infrastructure(record.termination)
    diffs = admitted_diffs(read, record.turns)
    check_text = episode.spec == record.spec
    style = record.cell.knobs.user_style
    primary_steps = [r.primary for r in read]
    # Version 3 serves ambiguous candidates on the realized state: check them turn by turn.
    served = episode.spec.generator >= 3 and any(t.kind == "ambiguous" for t in episode.turns)
    if diffs or served or any([t.dynamic for t in turns]):
        checker = ScheduleChecker(check_text)
        # the dose places generator 5's style turns; the replay's labels never read it
        user = ScriptedUser(episode, style, record.cell.knobs.user_dose)
        primary = _replay(user, turns, primary_steps, checker, ended, detail, answered)
        mismatches = checker.finish(user, not ended, len(turns))
    else:
        turns = as_planned(episode, turns)
        primary = _fresh_replay(
            episode, style, turns, primary_steps, ended, detail, replays, answered
        )
        mismatches = planned_mismatches(episode, turns, not ended, check_text)
    booked = [r for r in read if r is not NOTHING]  # the turns with anything to count
    # the same steps on every turn (a turn that booked nothing has none in both): one replay
    aware_steps = [r.decline_aware for r in read] if _cites(booked) else primary_steps
    aware = (
        primary
        if aware_steps is primary_steps
        else _fresh_replay(episode, style, turns, aware_steps, ended, detail, replays, answered)
    )
    return EpisodeScore(
        cell=record.cell,
        seed=record.spec.seed,
        trial=record.trial,
        termination=record.termination,
        infrastructure=infrastructure,
        scorable=True,
        primary=primary,
        decline_aware=aware,
        refused=sum(r.refused for r in booked),
        false_completions=sum(r.false_completions for r in booked),
        citations=sum(r.citations for r in booked),
        redisplays=sum(r.redisplays for r in booked),
        unknown=sum(r.unknown for r in booked),
        admitted_diffs=diffs,
        mismatches=mismatches,
        burden=burden_of(record, answered),
        cut=record_cuts(record),
    )
