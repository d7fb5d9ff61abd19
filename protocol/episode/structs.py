"""The episode a spec generates, as the scripted user plays it: its steps, its revision, its
planned turns and the brief (Section 4.1).

msgspec Structs, ``frozen=True, kw_only=True``, re-exported by :mod:`protocol.records`, whose
schema rules they follow (defaulted fields only; logs hold them).
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

from protocol.config import EpisodeSpec

__all__ = ["Episode", "Revision", "Step", "Turn", "TurnKind"]

TurnKind = Literal[
    "ask",
    "premature",
    "redo_probe",
    "superseded_cue",
    "legit_redo",
    "revision",
    "filler",
    "ambiguous",
    "re_ask",
    # the uncooperative user's turns (the user_style knob, issue #31; OURS, docs/protocol.md)
    "restate",
    "keep_claim",
    "keep_retracted",
    "double",
    # a budgeted step asked for once more (the budget knob, issue #48; OURS, docs/protocol.md)
    "budget_repeat",
    # an expiring step asked for again, before or after its run lapses (the expiry knob)
    "expiry_repeat",
    # the alternative of a done step asked for (the exclusive knob; closed, a trap)
    "exclusive_ask",
]


class _Frozen(msgspec.Struct, frozen=True, kw_only=True):
    pass


class Step(_Frozen, frozen=True, kw_only=True, gc=False):
    id: str  # s1..sS
    slug: str  # the template's slug, unique within and across domains
    text: str  # the description the brief shows
    code: str  # RC-dddd
    deps: tuple[str, ...]  # prerequisite ids (the 'requires:' list), sorted by id number


class Revision(_Frozen, frozen=True, kw_only=True):
    cancel: str
    rewires: dict[str, tuple[str, ...]]  # step -> its FULL remaining prerequisite list
    relax: tuple[str, str] | None  # (step, dropped prerequisite)
    text: str  # the user message that announces it


class Turn(_Frozen, frozen=True, kw_only=True, gc=False):
    """One scripted user turn. Frozen, its fields immutable: never in a reference cycle, so
    untracked by the cyclic collector (``gc=False``, as :class:`Step`; #50, eleventh round)."""

    index: int
    kind: TurnKind
    step: str | None  # the step the turn resolves to (None: filler, revision, ambiguous)
    work_order: str | None  # '#Wdddd' on every request; None on fillers and the revision
    text: str  # the user message as the scripted user writes it
    named: tuple[str, ...] = ()  # ambiguous probes: the two steps named
    dynamic: bool = False  # inserted at run time by the scripted user (a re-ask)


class Episode(_Frozen, frozen=True, kw_only=True):
    spec: EpisodeSpec
    steps: tuple[Step, ...]
    revision: Revision
    turns: tuple[Turn, ...]  # the planned 44-turn schedule
    brief: str  # the system prompt every arm receives
    # Generator 3 at tier 2: each step's held-out ask rewrites (each with one "{wo}"), which
    # the scripted user's dynamic re-asks use; empty otherwise (re-ask frames quote the brief).
    held_out_asks: dict[str, tuple[str, ...]] = {}
    # The budget knob (issue #48, generator 6; protocol.stress.budget): each budgeted step's
    # cap of executions, as the brief states it. Unset, and so not encoded, on every other
    # episode, whose encoding stays the earlier versions'.
    budgets: dict[str, int] | UnsetType = UNSET

    # The expiry knob (issue #48, generator 6; protocol.stress.expiry): the turns a run of
    # each expiring step stays valid, as the brief states it; unset (not encoded) otherwise.
    expiry: dict[str, int] | UnsetType = UNSET
    # The exclusive knob (issue #48, generator 6; protocol.stress.exclusive): each planned step
    # -> its alternative (listed in ``steps`` after the plan's; at most one of the two is
    # performed), as the brief states it; unset (not encoded) otherwise.
    exclusive: dict[str, str] | UnsetType = UNSET

    # The sessions knob (issue #48, generator 6; protocol.stress.sessions): the planned turn
    # indices at which a new session begins (the conversation restarts before that turn);
    # unset (not encoded) on every other episode, whose encoding stays the earlier versions'.
    sessions: tuple[int, ...] | UnsetType = UNSET

    @property
    def boundaries(self) -> tuple[int, ...]:
        """The planned turns that open a new session (empty: one session)."""
        return () if isinstance(self.sessions, UnsetType) else tuple(self.sessions)

    @property
    def caps(self) -> dict[str, int]:
        """The budgeted steps' caps (empty without a budget)."""
        return {} if isinstance(self.budgets, UnsetType) else dict(self.budgets)

    @property
    def lapses(self) -> dict[str, int]:
        """The expiring steps' validity in turns (empty without expiry)."""
        return {} if isinstance(self.expiry, UnsetType) else dict(self.expiry)

    @property
    def pairs(self) -> dict[str, str]:
        """Each exclusive pair, planned step -> its alternative (empty without one)."""
        return {} if isinstance(self.exclusive, UnsetType) else dict(self.exclusive)

    @property
    def ruled(self) -> bool:
        """Whether a rule beyond one-shot state is placed (issue #48: one per episode)."""
        return bool(self.caps or self.lapses or self.pairs)

    def step(self, step_id: str) -> Step:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)
