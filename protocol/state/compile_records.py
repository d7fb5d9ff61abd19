"""What a gate episode compiled, as its record keeps it: the compiled graph and revision, the
validator's verdict, the accuracy against the generator (Appendix D.3), and the corruptions of
the compiled state (Appendix D.4).

msgspec Structs, ``frozen=True, kw_only=True``, re-exported by :mod:`protocol.records`, whose
schema rules they follow (defaulted fields only; logs hold them).
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "AccuracyRecord",
    "CompileRecord",
    "CompiledRevisionRecord",
    "CompiledStepRecord",
    "CorruptionEvent",
    "ValidatorRecord",
]


class _Frozen(msgspec.Struct, frozen=True, kw_only=True):
    pass


class CompiledStepRecord(_Frozen, frozen=True, kw_only=True):
    """One step of a compiled graph as the compiler gave it."""

    id: str
    deps: tuple[str, ...] = ()
    code: str = ""


class CompiledRevisionRecord(_Frozen, frozen=True, kw_only=True):
    cancel: str | None = None
    rewires: dict[str, tuple[str, ...]] = {}
    relax: tuple[str, str] | None = None


class ValidatorRecord(_Frozen, frozen=True, kw_only=True):
    """The ground-truth-free validator's verdict (Appendix D.3)."""

    passed: bool
    flags: tuple[str, ...] = ()
    empty_code: tuple[str, ...] = ()
    cancelled_in_deps: tuple[str, ...] = ()
    cycle: bool = False
    unknown_dep: tuple[str, ...] = ()
    malformed: bool = False


class AccuracyRecord(_Frozen, frozen=True, kw_only=True):
    """The compile against the generator, for the record only (Table 5)."""

    exact: bool
    steps: int
    dep: int
    code: int
    cancel: bool
    rewire: bool
    relax: bool
    extra_steps: int = 0


class CompileRecord(_Frozen, frozen=True, kw_only=True):
    """What a gate episode compiled: the graph and revision, the validator, the accuracy."""

    model: str  # the compile model's label
    graph: tuple[CompiledStepRecord, ...]
    graph_error: str | None = None
    revision: CompiledRevisionRecord = CompiledRevisionRecord()
    revision_error: str | None = None
    # the raw compiler replies of a component that could not be read (its error set), each
    # bounded (kept_reply); None where it was read (the run's cache and helpers.jsonl keep all)
    graph_reply: str | None = None
    revision_reply: str | None = None
    validator: ValidatorRecord
    accuracy: AccuracyRecord
    enforcing: bool = False  # the gate refused bookings (hybrid: the validator passed)
    cached: bool = False  # this episode made no compile request

    def step(self, step_id: str) -> CompiledStepRecord | None:
        return next((s for s in self.graph if s.id == step_id), None)


class CorruptionEvent(_Frozen, frozen=True, kw_only=True):
    """One corruption of the compiled state (Appendix D.4), before the turn's decision."""

    turn: int
    step: str
    kind: Literal["drop_edge", "lost_done", "spurious_done"]
    edge: str | None = None  # drop_edge: the prerequisite dropped
