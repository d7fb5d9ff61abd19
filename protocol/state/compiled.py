"""The compiled state machine's data (Section 3.2, Appendices B.3, D.3): the compiled graph
and revision, the gate's state from them, the ground-truth-free validator, and compile
accuracy. Parsing the compiler's and matcher's replies is :mod:`protocol.state.compiled_parse`.

Pure functions over strings and Structs; no I/O.

Validator (:func:`validate`, Appendix D.3), ground-truth-free: it reads only the compiled
graph and revision. Flags, each by name in ``Validation.flags``:

* ``empty_code``: a step whose compiled completion code is empty or is not one completion code
  (``RC-dddd`` after :func:`protocol.state.receipts.normalize_code`): such a step can never be
  booked, so its dependents are over-blocked for ever (the paper's "empty code");
* ``cancelled_in_deps``: after the compiled revision, the cancelled step still sits in the
  dependency list of a step that is not cancelled (the paper's "Canc.");
* ``cycle``: the dependency relation has a cycle, before or after the revision (the paper's
  compiled rewires that close a cycle);
* ``malformed`` (OURS): the graph or the revision reply could not be read, or the graph has
  no steps;
* ``unknown_dep`` (OURS): a dependency, rewire, cancel or relax names a step the compiled
  graph does not hold; such a prerequisite can never be done.
* ``budget`` (OURS, issue #48): a compiled budget names a step the graph does not hold, or a
  cap below 1 (the parser keeps only whole numbers; a cap of 0 would refuse a step the brief
  lets run). ``expiry`` (OURS): the same for a compiled expiry (a validity below 1 turn).
  ``exclusive`` (OURS): a compiled exclusive pair names a step the graph does not hold.

The last two are not in the paper's list; they catch compile failures the paper's compiler
never produced (an unreadable reply), so the paper's three flags are reported apart as
``Validation.paper_flags``.

Accuracy (:func:`compile_accuracy`, Table 5) compares with the generator's episode, for the
record only: the gate's state never reads it. A revision reply that could not be read
(``error`` set) agrees in no component (ours): its empty stand-in would otherwise match a
revision with no rewires or relax and score an unreadable reply as a correct one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec
from msgspec import UNSET, UnsetType

from protocol.records import (
    AccuracyRecord,
    CompiledRevisionRecord,
    CompiledStepRecord,
    CompileRecord,
    Episode,
    ValidatorRecord,
    kept_reply,
)
from protocol.state.machine import TaskState, sort_ids
from protocol.state.receipts import normalize_code

__all__ = [
    "MATCHER_BYPASS",
    "CompileAccuracy",
    "CompiledGraph",
    "CompiledRevision",
    "CompiledStep",
    "Validation",
    "code_table",
    "compile_accuracy",
    "compile_record",
    "compiled_state",
    "revised_state",
    "validate",
]

PAPER_FLAGS = ("empty_code", "cancelled_in_deps", "cycle")
# Turn kinds that bypass the matcher by schedule metadata (Appendix B.2).
# (the uncooperative user's remarks on the revision, no work order, bypass it too: ours)
MATCHER_BYPASS = frozenset({"filler", "revision", "keep_claim", "keep_retracted"})


class CompiledStep(msgspec.Struct, frozen=True, kw_only=True):
    deps: tuple[str, ...] = ()
    code: str = ""


class CompiledGraph(msgspec.Struct, frozen=True, kw_only=True):
    """V, E and the completion codes as the compiler wrote them."""

    steps: dict[str, CompiledStep]
    error: str | None = None  # why the reply could not be read (then ``steps`` is empty)
    # the budget knob (issue #48, OURS): each budgeted step's cap of runs, as the compiler read
    # the brief's BUDGETS list; unset (and so not encoded) when the compile was not asked
    budgets: dict[str, int] | UnsetType = UNSET
    # the expiry knob: each expiring step's validity in turns, read as the budgets are
    expiry: dict[str, int] | UnsetType = UNSET
    # the exclusive knob: each pair the brief's EXCLUSIVE STEPS list names, first -> second
    exclusive: dict[str, str] | UnsetType = UNSET

    @property
    def caps(self) -> dict[str, int]:
        """The compiled budgets (empty when none)."""
        return {} if isinstance(self.budgets, UnsetType) else dict(self.budgets)

    @property
    def lapses(self) -> dict[str, int]:
        """The compiled expiry (empty when none)."""
        return {} if isinstance(self.expiry, UnsetType) else dict(self.expiry)

    @property
    def pairs(self) -> dict[str, str]:
        """The compiled exclusive pairs (empty when none)."""
        return {} if isinstance(self.exclusive, UnsetType) else dict(self.exclusive)

    @property
    def malformed(self) -> bool:
        return self.error is not None


class CompiledRevision(msgspec.Struct, frozen=True, kw_only=True):
    cancel: str | None = None
    rewires: dict[str, tuple[str, ...]] = {}
    relax: tuple[str, str] | None = None
    error: str | None = None

    @property
    def malformed(self) -> bool:
        return self.error is not None


class Validation(msgspec.Struct, frozen=True, kw_only=True):
    flags: tuple[str, ...]  # every flag raised, by name (see the module docstring)
    empty_code: tuple[str, ...] = ()
    cancelled_in_deps: tuple[str, ...] = ()  # steps still listing the cancelled step
    cycle: bool = False
    unknown_dep: tuple[str, ...] = ()  # ids named but not compiled
    malformed: bool = False

    @property
    def passed(self) -> bool:
        return not self.flags

    @property
    def paper_flags(self) -> tuple[str, ...]:
        return tuple(f for f in self.flags if f in PAPER_FLAGS)


class CompileAccuracy(msgspec.Struct, frozen=True, kw_only=True):
    """One episode's compile against the generator (Table 5 per-episode counts)."""

    steps: int  # S
    dep: int  # steps whose compiled dependency set equals the generator's
    code: int  # steps whose compiled code equals the generator's
    cancel: bool
    rewire: bool  # the compiled rewires equal the generator's (as sets), every one
    relax: bool
    extra_steps: int = 0  # compiled ids the generator does not have

    @property
    def exact(self) -> bool:
        """Any disagreement with the generator at all (the paper's "!= GT" episodes)."""
        return (
            self.dep == self.steps
            and self.code == self.steps
            and self.cancel
            and self.rewire
            and self.relax
            and not self.extra_steps
        )


# --- state -------------------------------------------------------------------------------


def compiled_state(graph: CompiledGraph) -> TaskState:
    """The gate's opening state: the compiled V and E, nothing done."""
    return TaskState(
        {v: s.deps for v, s in graph.steps.items()},
        budgets=graph.caps,
        expiry=graph.lapses,
        exclusive=graph.pairs,
    )


def revised_state(graph: CompiledGraph, revision: CompiledRevision) -> TaskState:
    state = compiled_state(graph)
    state.apply_revision(revision.cancel, revision.rewires, revision.relax)
    return state


def code_table(graph: CompiledGraph) -> dict[str, str]:
    """Normalized completion code -> compiled step id; unreadable codes are left out, and a
    code compiled for two steps names the first in id order."""
    table: dict[str, str] = {}
    for v, s in graph.steps.items():
        code = normalize_code(s.code)
        if code is not None:
            table.setdefault(code, v)
    return table


# --- validator (Appendix D.3) ------------------------------------------------------------


def validate(graph: CompiledGraph, revision: CompiledRevision) -> Validation:
    """The ground-truth-free validator: reads only the compile (see the module docstring)."""
    known = set(graph.steps)
    empty = tuple(v for v, s in graph.steps.items() if normalize_code(s.code) is None)
    after = revised_state(graph, revision)
    cancelled = revision.cancel
    in_deps: tuple[str, ...] = ()
    if cancelled is not None:
        in_deps = sort_ids(
            v for v, d in after.deps.items() if cancelled in d and v not in after.cancelled
        )
    cycle = not compiled_state(graph).is_acyclic() or not after.is_acyclic()
    named: set[str] = {u for s in graph.steps.values() for u in s.deps}
    named |= {u for w, d in revision.rewires.items() for u in (w, *d)}
    if cancelled is not None:
        named.add(cancelled)
    if revision.relax is not None:
        named |= set(revision.relax)
    unknown = sort_ids(named - known)
    malformed = graph.malformed or revision.malformed or not graph.steps
    budget = any(v not in known or cap < 1 for v, cap in graph.caps.items())
    expiry = any(v not in known or t < 1 for v, t in graph.lapses.items())
    exclusive = any(a not in known or b not in known for a, b in graph.pairs.items())
    flags = [
        name
        for name, raised in (
            ("empty_code", bool(empty)),
            ("cancelled_in_deps", bool(in_deps)),
            ("cycle", cycle),
            ("malformed", malformed),
            ("unknown_dep", bool(unknown)),
            ("budget", budget),
            ("expiry", expiry),
            ("exclusive", exclusive),
        )
        if raised
    ]
    return Validation(
        flags=tuple(flags),
        empty_code=empty,
        cancelled_in_deps=in_deps,
        cycle=cycle,
        unknown_dep=unknown,
        malformed=malformed,
    )


# --- accuracy against the generator (Table 5) --------------------------------------------


def _same_rewires(a: Mapping[str, Iterable[str]], b: Mapping[str, Iterable[str]]) -> bool:
    return {k: frozenset(v) for k, v in a.items()} == {k: frozenset(v) for k, v in b.items()}


def compile_accuracy(
    graph: CompiledGraph, revision: CompiledRevision, episode: Episode
) -> CompileAccuracy:
    """How the compile agrees with the generator's graph and revision, per component."""
    dep = code = 0
    for s in episode.steps:
        c = graph.steps.get(s.id)
        if c is None:
            continue
        dep += frozenset(c.deps) == frozenset(s.deps)
        code += normalize_code(c.code) == s.code
    truth = episode.revision
    read = not revision.malformed  # an unreadable revision agrees with nothing (ours)
    return CompileAccuracy(
        steps=len(episode.steps),
        dep=dep,
        code=code,
        cancel=read and revision.cancel == truth.cancel,
        rewire=read and _same_rewires(revision.rewires, truth.rewires),
        relax=read and revision.relax == truth.relax,
        extra_steps=len(set(graph.steps) - {s.id for s in episode.steps}),
    )


# --- the record a gate episode logs -------------------------------------------------------


def compile_record(
    model: str,
    graph: CompiledGraph,
    revision: CompiledRevision,
    validation: Validation,
    accuracy: CompileAccuracy,
    *,
    enforcing: bool,
    cached: bool,
    graph_reply: str = "",
    revision_reply: str = "",
) -> CompileRecord:
    """The typed compile record of one gate episode (graph as a list of steps by id); the raw
    reply of a component that could not be read is kept, bounded (``kept_reply``)."""
    return CompileRecord(
        model=model,
        graph=tuple(
            CompiledStepRecord(id=v, deps=s.deps, code=s.code) for v, s in graph.steps.items()
        ),
        graph_error=graph.error,
        revision=CompiledRevisionRecord(
            cancel=revision.cancel, rewires=dict(revision.rewires), relax=revision.relax
        ),
        revision_error=revision.error,
        graph_reply=kept_reply(graph_reply) if graph.error is not None else None,
        revision_reply=kept_reply(revision_reply) if revision.error is not None else None,
        validator=ValidatorRecord(passed=validation.passed, **msgspec.structs.asdict(validation)),
        accuracy=AccuracyRecord(exact=accuracy.exact, **msgspec.structs.asdict(accuracy)),
        enforcing=enforcing,
        cached=cached,
    )
