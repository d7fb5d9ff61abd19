"""The stateful rungs: directive gate, enforcement gate, validator-gated hybrid, self-ledger
(Sections 3.2, 3.3; Appendices D.3, D.4, E.2).

The gates own a task state compiled by the compile model from the brief and the revision
message (:mod:`runner.helpers`, :mod:`protocol.compiled`); it never reads the generator's
graph (``compile_info.accuracy`` compares with it for the record only). The compiled state
is a :class:`protocol.state.TaskState` advanced only

* on receipts: a booking the world admitted whose code the compiled graph maps to a step
  marks that step done (a booking of a code the compile got wrong never lands), and
* by the compiled revision, applied at the revision turn.

Per turn (filler and revision turns bypass the matcher, Appendix B.2): the matcher resolves
the user's text to (step, explicit redo); alpha is set to the step when the redo flag is up
(``begin_turn(authorize=...)``), and one directive line for the step's verdict on the
compiled state is appended to the user message (``compose_user_message``). No directive when
the matcher returns no step or a step the compiled graph does not hold.

Variants (knobs of the cell):

* ``directive_role="system"``: the directive is added to the system prompt for that call only
  (``Shaped.system_extra``) and never kept in the history; rejection notices stay in the
  user role.
* ``matched_step_line=True`` (Appendix E.2 "checklist plus matched step"): instead of the
  directive, the checklist of the COMPILED state plus ``MATCHED_STEP_LINE`` naming the
  matcher's step, with no instruction.
* ``checklist_mode="replace"``: what the arm adds to a user message is shown on that turn
  only; the history keeps the message without it (with the matched-step line this is the
  paper's replace-mode control).
* ``corruption=epsilon`` (Appendix D.4): before each turn's decision, every step of the
  compiled state is corrupted with probability epsilon (a flipped done bit, or one of its
  edges dropped, half and half; a step without edges has its done bit flipped). The RNG is
  seeded from the episode spec, the cell's model and regime and epsilon, NOT the arm, so the
  directive and enforcement cells of one configuration draw the same stream (paired). Every
  corruption is logged in ``self.corruptions``. Step-turns are every step at every turn,
  fillers included (``CORRUPT_ON_FILLERS``): the paper's expected counts (0.8, 1.9 and 6.5
  corruptions per episode at 1e-3, 3e-3, 1e-2, S = 15) imply about 650 step-turns per
  episode, i.e. 15 steps x 44 turns, not the ~28 non-filler turns.

Enforcement (``enforce``; ``hybrid`` when the validator passes): a booking is refused iff
its step, found by its code in the COMPILED graph, is cancelled, done without authorization
or blocked under the compiled state at the start of the turn; request-bound enforcement
(``binding="request"``) also refuses any step other than the matched one (every booking when
the matcher resolved no step). A booking whose code the compiled graph does not know (an
empty or wrong compiled code) is refused as well: the module cannot tell which step it books,
so it cannot admit it as a receipt (status ``not in the plan``, step ``?`` in the notice).
Refused bookings never reach the realized state; one rejection notice per refused booking is
prepended to the next user turn (or given the same turn, ``notice="same_turn"``, by
:mod:`runner.episode`).

Hybrid: enforcement where the validator (Appendix D.3) passes the compiled graph and
revision, the directive gate (admit everything) where it flags them;
``compile_info.enforcing`` records the decision.

Self-ledger: the brief carries the ledger clause; the agent's own ``LEDGER`` lines, merged
over its replies (last entry per step wins), are rendered back every turn in the checklist's
slot (nothing until it has written one); no matcher, no directives, no compile.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from protocol import strings
from protocol.brief import render_brief
from protocol.compiled import (
    MATCHER_BYPASS,
    Validation,
    code_table,
    compile_accuracy,
    compile_record,
    compiled_state,
    validate,
)
from protocol.receipts import normalize_code, parse_ledger
from protocol.records import Booking, CorruptionEvent, Turn
from protocol.render import (
    compose_user_message,
    render_checklist,
    render_directive,
    render_ledger,
    render_rejection,
)
from protocol.state import TaskState, sort_ids
from runner.arms.base import Admission, ArmSession, EpisodeContext, Shaped
from runner.helpers import Compiled, Helpers

__all__ = [
    "CORRUPT_ON_FILLERS",
    "DirectiveGate",
    "EnforcementGate",
    "HybridGate",
    "SelfLedger",
]

CORRUPT_ON_FILLERS = True
UNKNOWN_STATUS = "not in the plan"  # rejection status of a code the compile does not know
UNREQUESTED_STATUS = "not requested"  # request-bound refusal of another step


class DirectiveGate(ArmSession):
    """The directive gate; the base of the enforcement gate and the hybrid."""

    name = "directive"
    compiles = True  # read by Helpers.precompile
    enforcing = False

    def __init__(self, ctx: EpisodeContext) -> None:
        super().__init__(ctx)
        self.gate: TaskState = TaskState({})
        self.codes: dict[str, str] = {}
        self.compiled: Compiled | None = None
        self.validation: Validation | None = None
        spec, cell = ctx.episode.spec, ctx.cell
        self._rng = random.Random(
            f"corrupt|{spec.seed}|{spec.steps}|{spec.density!r}|{spec.domain}|"
            f"{cell.model}|{cell.regime}|{self.knobs.corruption!r}"
        )

    @property
    def helpers(self) -> Helpers:
        if self.ctx.helpers is None:
            raise RuntimeError(f"the {self.name!r} arm needs runner.helpers.Helpers in its context")
        return self.ctx.helpers

    # --- compile ------------------------------------------------------------------------
    async def prepare(self) -> None:
        compiled, calls = await self.helpers.compile(self.ctx.cell, self.episode)
        self.ctx.calls.extend(calls)
        self.compiled = compiled
        self.gate = compiled_state(compiled.graph)
        self.codes = code_table(compiled.graph)
        self.validation = validate(compiled.graph, compiled.revision)
        self.enforcing = self._enforces(self.validation)
        accuracy = compile_accuracy(compiled.graph, compiled.revision, self.episode)
        self.compile_info = compile_record(
            compiled.model,
            compiled.graph,
            compiled.revision,
            self.validation,
            accuracy,
            enforcing=self.enforcing,
            cached=all(c.cached for c in calls),
        )

    def _enforces(self, validation: Validation) -> bool:
        return type(self).enforcing

    # --- shaping ------------------------------------------------------------------------
    async def shape(self, turn: Turn, state: TaskState, notices: Sequence[str]) -> Shaped:
        gate = self.gate
        if turn.kind == "revision" and self.compiled is not None:
            rev = self.compiled.revision
            gate.apply_revision(rev.cancel, rev.rewires, rev.relax)
        self._corrupt(turn)
        plain = compose_user_message(turn.text, notices=list(notices))
        step: str | None = None
        redo: bool | None = None
        outcome = None
        if turn.kind in MATCHER_BYPASS:
            gate.begin_turn(None)
        else:
            answer, calls = await self.helpers.match(self.ctx.cell, self.episode, turn)
            self.ctx.calls.extend(calls)
            step, redo, outcome = answer.step, answer.redo, answer.outcome
            gate.begin_turn(step if redo else None)
        addition, directive = self._addition(step)
        shaped = Shaped(
            sent=plain,
            kept=plain,
            matched_step=step,
            matched_redo=redo,
            matcher_outcome=outcome,
            directive=directive,
        )
        if not addition:
            return shaped
        shaped.arm_text = addition
        if directive is not None and self.knobs.directive_role == "system":
            shaped.system_extra = "\n\n" + directive
            return shaped
        shaped.sent = compose_user_message(turn.text, notices=list(notices), addition=addition)
        if self.knobs.checklist_mode != "replace":
            shaped.kept = shaped.sent
        return shaped

    def _addition(self, step: str | None) -> tuple[str, str | None]:
        """(what the arm adds to the turn, the directive line or None) for the matched step."""
        gate = self.gate
        if self.knobs.matched_step_line:  # Appendix E.2: the checklist every turn, no instruction
            lines = [render_checklist(gate)]
            if step is not None:
                lines.append(strings.MATCHED_STEP_LINE.format(id=step))
            return "\n".join(lines), None
        if step is None or step not in gate.deps:
            return "", None
        directive = render_directive(step, gate.verdict(step))
        return directive, directive

    # --- receipts -----------------------------------------------------------------------
    def _compiled_step(self, booking: Booking) -> str | None:
        code = normalize_code(booking.code)
        return self.codes.get(code) if code is not None else None

    def observe(self, turn: Turn, admitted: Sequence[Booking], reply: str) -> None:
        for b in admitted:
            v = self._compiled_step(b)
            if v is not None:
                self.gate.book(v)

    def admit(self, turn: Turn, shaped: Shaped, bookings: Sequence[Booking]) -> Admission:
        if not self.enforcing:
            return super().admit(turn, shaped, bookings)
        adm = Admission(admitted=[])
        for b in bookings:
            status, step = self._refusal(b, shaped)
            if status is None:
                adm.admitted.append(b)
            else:
                adm.refused.append(b)
                adm.notices.append(render_rejection(b, status, step))
        return adm

    def refusal(self, booking: Booking, shaped: Shaped) -> tuple[str | None, str | None]:
        if not self.enforcing:
            return super().refusal(booking, shaped)
        return self._refusal(booking, shaped)

    def _refusal(self, booking: Booking, shaped: Shaped) -> tuple[str | None, str]:
        """(why the gate refuses ``booking`` or None, the compiled step named)."""
        v = self._compiled_step(booking)
        if v is None or booking.step is None:
            return UNKNOWN_STATUS, "?"
        gate = self.gate
        status = gate.status(v)
        if status == "cancelled" or status == "blocked":
            return status, v
        if status == "done" and v not in gate.authorized:
            return "done", v
        if self.knobs.binding == "request" and v != shaped.matched_step:
            return UNREQUESTED_STATUS, v
        return None, v

    # --- corrupted-state ablation (Appendix D.4) ---------------------------------------
    def _corrupt(self, turn: Turn) -> None:
        eps = self.knobs.corruption
        if eps <= 0 or (turn.kind == "filler" and not CORRUPT_ON_FILLERS):
            return
        gate, rng = self.gate, self._rng
        for v in gate.steps:
            if rng.random() >= eps:
                continue
            deps = sort_ids(gate.deps[v])
            if deps and rng.random() < 0.5:
                u = rng.choice(deps)
                gate.deps[v] = gate.deps[v] - {u}
                event = CorruptionEvent(turn=turn.index, step=v, kind="drop_edge", edge=u)
            elif v in gate.done:
                gate.done.discard(v)
                event = CorruptionEvent(turn=turn.index, step=v, kind="lost_done")
            else:
                gate.done.add(v)
                event = CorruptionEvent(turn=turn.index, step=v, kind="spurious_done")
            self.corruptions.append(event)


class EnforcementGate(DirectiveGate):
    name = "enforce"
    enforcing = True


class HybridGate(DirectiveGate):
    """Enforcement where the validator passes the compile, the directive gate where not."""

    name = "hybrid"
    enforcing = True

    def _enforces(self, validation: Validation) -> bool:
        return validation.passed


class SelfLedger(ArmSession):
    name = "ledger"

    def __init__(self, ctx: EpisodeContext) -> None:
        super().__init__(ctx)
        self.ledger: dict[str, str] = {}

    def system_prompt(self) -> str:
        return render_brief(
            self.episode.steps, self.episode.spec.brief, ledger=True, tools=self.knobs.tools
        )

    def addition(self, turn: Turn, state: TaskState) -> str:
        return render_ledger(self.ledger)

    async def shape(self, turn: Turn, state: TaskState, notices: Sequence[str]) -> Shaped:
        shaped = await super().shape(turn, state, notices)
        if self.knobs.checklist_mode == "replace":
            shaped.kept = compose_user_message(turn.text, notices=list(notices))
        return shaped

    def observe(self, turn: Turn, admitted: Sequence[Booking], reply: str) -> None:
        self.ledger.update(parse_ledger(reply))
