"""The gates: directive gate, enforcement gate, validator-gated hybrid
(Sections 3.2, 3.3; Appendices D.3, D.4, E.2); the self-ledger is :mod:`runner.arms.ledger`.

The gates own a task state compiled by the compile model from the brief and the revision
message (:mod:`runner.gates.helper_models`, :mod:`protocol.state.compiled`); it never reads the generator's
graph (``compile_info.accuracy`` compares with it for the record only). The compiled state
is a :class:`protocol.state.machine.TaskState` advanced only

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
  directive, the replace-mode checklist (the generator's exact realized state, shown on the
  current turn only, whatever ``checklist_mode`` says) plus ``MATCHED_STEP_LINE`` naming the
  matcher's step, with no instruction.
* ``checklist_mode="replace"``: what the arm adds to a user message is shown on that turn
  only; the history keeps the message without it.
* ``corruption=epsilon`` (Appendix D.4): before each turn's decision, every step of the
  compiled state is corrupted with probability epsilon (a flipped done bit, or one of its
  edges dropped, half and half; a step without edges has its done bit flipped). The RNG is
  seeded from the episode spec, the cell's model and regime and epsilon, NOT the arm, so the
  directive and enforcement cells of one configuration draw the same stream (paired). Every
  corruption is logged in ``self.corruptions``. The seeding and the draw live in
  :mod:`protocol.stress.corruption`, which the Table 12 replay re-draws with. Reading of "flipped
  done bits and dropped edges at rate epsilon per step-turn" (ours, docs/protocol.md): a
  step-turn is every step at every turn, fillers included (``CORRUPT_ON_FILLERS``). The
  paper's counts (0.8, 1.9 and 6.5 corruptions per episode at 1e-3, 3e-3, 1e-2, S = 15
  dense) fit 15 steps x 44 turns = 660 step-turns (0.66, 1.98, 6.6 expected); the 21
  non-filler, non-revision turns of an S = 15 dense episode (S + 6) would give 315
  step-turns and 0.32, 0.95, 3.2.

Enforcement (``enforce``; ``hybrid`` when the validator passes), state-bound (Section 3.3):
a booking is refused iff its step, found by its code in the COMPILED graph, is cancelled,
done without authorization or blocked, and any other booking is admitted, a booking whose
code the compiled graph does not know (an empty or wrong compiled code) included: the compiled
state cannot advance on it. The bookings of one reply are judged in order, each on the state
the bookings admitted before it produced (Section 5.4), so a step booked right after its
prerequisite in one reply is admitted. Request-bound enforcement (``binding="request"``) also
refuses any step other than the matched one (every booking when the matcher resolved no step)
and a code it cannot place (status ``not in the plan``, step ``?`` in the notice). Refused
bookings never reach the realized state; one rejection notice per refused booking is
prepended to the next user turn (or given the same turn, ``notice="same_turn"``, by
:mod:`runner.execution.episode_loop`, whose retried reply's refusals reach the next turn).

Hybrid: enforcement where the validator (Appendix D.3) passes the compiled graph and
revision, the directive gate (admit everything) where it flags them;
``compile_info.enforcing`` records the decision.

"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from protocol import strings
from protocol.arms.askback import Principal, ask_reason, question, render_exchange, render_show
from protocol.arms.render import (
    compose_user_message,
    render_checklist,
    render_directive,
    render_rejection,
)
from protocol.arms.table import ArmSpec, arm_spec
from protocol.records import Booking, Escalation, Turn
from protocol.state.compiled import (
    MATCHER_BYPASS,
    Validation,
    code_table,
    compile_accuracy,
    compile_record,
    compiled_state,
    validate,
)
from protocol.state.machine import TaskState
from protocol.state.receipts import normalize_code
from protocol.stress.corruption import CORRUPT_ON_FILLERS, corruption_rng, draw_corruptions
from protocol.stress.spoof import own_words
from runner.arms.base import Admission, ArmSession, EpisodeContext, Shaped
from runner.gates.helper_models import Compiled, Helpers

__all__ = [
    "CORRUPT_ON_FILLERS",
    "DirectiveGate",
    "EnforcementGate",
    "HybridGate",
]

# OURS: the statuses the rejection notice names for the request-bound refusals, which the
# paper's notice does not list (it names cancelled, already done and blocked).
UNKNOWN_STATUS = "not in the plan"  # request-bound: a code the compile does not know
UNREQUESTED_STATUS = "not requested"  # request-bound: a step other than the matched one


class DirectiveGate(ArmSession):
    """The gates (directive, enforce, hybrid, and any arm whose row names this session): the
    row's traits say whether it refuses bookings (``ArmSpec.enforcing``) and whether only
    where the validator passes its compile (``ArmSpec.validated``)."""

    def __init__(self, ctx: EpisodeContext) -> None:
        super().__init__(ctx)
        row = arm_spec(ctx.cell.arm)
        self.traits = row if row is not None else ArmSpec(name=ctx.cell.arm)
        self.enforcing = self.traits.enforcing
        self.gate: TaskState = TaskState({})
        self.codes: dict[str, str] = {}
        self.compiled: Compiled | None = None
        self.validation: Validation | None = None
        spec, cell = ctx.episode.spec, ctx.cell
        self._rng = corruption_rng(spec, cell.model, cell.regime, self.knobs.corruption)
        self._texts = {s.id: s.text for s in ctx.episode.steps}  # the brief's step texts

    @property
    def helpers(self) -> Helpers:
        if self.ctx.helpers is None:
            raise RuntimeError(
                f"the {self.ctx.cell.arm!r} arm needs runner.gates.helper_models.Helpers in its context"
            )
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
            graph_reply=compiled.graph_reply,
            revision_reply=compiled.revision_reply,
        )

    def _enforces(self, validation: Validation) -> bool:
        return self.traits.enforcing and (validation.passed or not self.traits.validated)

    # --- shaping ------------------------------------------------------------------------
    async def shape(self, turn: Turn, state: TaskState, notices: Sequence[str]) -> Shaped:
        gate = self.gate
        if turn.kind == "revision" and self.compiled is not None:
            rev = self.compiled.revision
            gate.apply_revision(rev.cancel, rev.rewires, rev.relax)
        self._corrupt(turn)
        plain = compose_user_message(turn.text, notices=list(notices))
        shaped = Shaped(sent=plain, kept=plain)
        if turn.kind in MATCHER_BYPASS:
            gate.begin_turn(None, now=turn.index)
        else:
            await self._read(turn, shaped)
            if shaped.matched_redo:
                shaped.matched_redo = await self._principal_authorizes(turn, shaped)
            step = shaped.matched_step
            gate.begin_turn(step if shaped.matched_redo else None, now=turn.index)
        addition, directive = self._addition(shaped.matched_step, state)
        shaped.directive = directive
        gate_lines = [addition] if addition else []  # what the gate says: show, directive
        if self.knobs.show and turn.kind not in MATCHER_BYPASS and not self.knobs.matched_step_line:
            gate_lines.insert(0, render_show(shaped.matched_step, self._texts))
        exchange = ""  # the user's own words: stays in the user role whatever the directive's
        if shaped.question is not None and shaped.answer is not None:
            exchange = render_exchange(shaped.question, shaped.answer)
        lines = [exchange, *gate_lines] if exchange else gate_lines
        if not lines:
            return shaped
        shaped.arm_text = "\n".join(lines)
        if directive is not None and self.knobs.directive_role == "system":
            shaped.system_extra = "\n\n" + "\n".join(gate_lines)
            if not exchange:
                return shaped
            shaped.user_addition = exchange
        else:
            shaped.user_addition = shaped.arm_text
        shaped.sent = compose_user_message(
            turn.text, notices=list(notices), addition=shaped.user_addition
        )
        # Appendix E.2's control is the replace-mode checklist: shown on this turn only.
        shaped.kept = self.kept(turn, notices, shaped.sent)
        return shaped

    async def _read(self, turn: Turn, shaped: Shaped) -> None:
        """The matcher's reading of ``turn`` into ``shaped``; with the ask knob, a question to
        the user when the reading is not to be trusted, and the reading of the answer."""
        answer, calls = await self.helpers.match(self.ctx.cell, self.episode, turn)
        self.ctx.calls.extend(calls)
        shaped.matched_step, shaped.matched_redo = answer.step, answer.redo
        shaped.matcher_outcome = answer.outcome
        shaped.matcher_replies = answer.replies
        mode = self.knobs.ask
        if mode == "off":
            return
        second: str | None = answer.step
        if mode == "second_reading" and answer.step is not None and not answer.malformed:
            other, calls = await self.helpers.match(self.ctx.cell, self.episode, turn, reverse=True)
            self.ctx.calls.extend(calls)
            shaped.askback_calls += len(calls)
            second = other.step
        reason = ask_reason(mode, answer.step, answer.malformed, self.gate.deps, second)
        if reason is None:
            return
        candidates = {v: self._texts[v] for v in (answer.step, second) if v in self._texts}
        shaped.question = question(reason, candidates)
        shaped.ask_reason = reason
        shaped.first_match = answer.step
        shaped.answer = self.principal.clarify().text
        clarified = msgspec.structs.replace(turn, text=shaped.answer)
        answer, calls = await self.helpers.match(self.ctx.cell, self.episode, clarified)
        self.ctx.calls.extend(calls)
        shaped.askback_calls += len(calls)
        shaped.matched_step, shaped.matched_redo = answer.step, answer.redo
        shaped.matcher_outcome = answer.outcome
        shaped.matcher_replies += answer.replies

    async def _principal_authorizes(self, turn: Turn, shaped: Shaped) -> bool:
        """Authorization comes only from the principal (issue #37): a redo the matcher read in
        a message that forwards third-party text stands only when the matcher reads it, for
        the same step, in the principal's own words (the text before the forwarded message;
        one more matcher call, logged with the turn's). A message that forwards nothing
        stands as read, so no cell without forwarded text changes."""
        own = own_words(turn.text)
        if own == turn.text:
            return True
        answer, calls = await self.helpers.match(
            self.ctx.cell, self.episode, msgspec.structs.replace(turn, text=own)
        )
        self.ctx.calls.extend(calls)
        return answer.redo and answer.step == shaped.matched_step

    @property
    def principal(self) -> Principal:
        if self.ctx.principal is None:
            raise RuntimeError(
                f"the {self.ctx.cell.arm!r} arm's ask and escalate knobs need the scripted "
                "user (EpisodeContext.principal)"
            )
        return self.ctx.principal

    def _addition(self, step: str | None, state: TaskState) -> tuple[str, str | None]:
        """(what the arm adds to the turn, the directive line or None) for the matched step."""
        gate = self.gate
        if self.knobs.matched_step_line:
            # Appendix E.2 "checklist plus matched step": the replace-mode checklist, which is
            # the generator's exact realized state, plus one line naming the matcher's step;
            # no instruction.
            lines = [render_checklist(state)]
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
        """The compiled state advances on each admitted booking. An authorized redo authorizes
        one execution: the step's authorization is spent once it ran (issue #37; it matters
        only on the tool harness, where the arm is told of each call at once and a timeout
        whose write landed can be retried in the same turn; the text protocol tells the arm
        after the turn, and the next turn resets it)."""
        for b in admitted:
            v = self._compiled_step(b)
            if v is not None:
                self.gate.book(v)
                self.gate.authorized.discard(v)

    def admit(
        self,
        turn: Turn,
        shaped: Shaped,
        bookings: Sequence[Booking],
        prior: Sequence[Booking] = (),
    ) -> Admission:
        """Bookings are judged in order, each on the compiled state the bookings admitted
        before it on this turn produced (``prior``, a same-turn retry's first reply, then
        this reply's; Section 5.4: "each call admitted because the state is correct"); the
        compiled state itself advances in :meth:`observe`."""
        if not self.enforcing:
            return super().admit(turn, shaped, bookings, prior)
        adm = Admission(admitted=[])
        state = self.gate.copy()
        for b in prior:
            if (v := self._compiled_step(b)) is not None:
                state.book(v)
        executed = [b.step for b in prior if b.step is not None]
        for b in bookings:
            status, step = self._refusal(b, shaped, state)
            if status is not None and self.knobs.escalate:
                confirmed = self.principal.escalation(b, executed)
                adm.escalations.append(
                    Escalation(booking=b, status=status, step=step, confirmed=confirmed)
                )
                if confirmed:  # an override: this booking, once
                    status = None
            if status is None:
                adm.admitted.append(b)
                if b.step is not None:
                    executed.append(b.step)
                if step is not None:
                    state.book(step)
            else:
                adm.refused.append(b)
                adm.notices.append(render_rejection(b, status, step))
        return adm

    def refusal(self, booking: Booking, shaped: Shaped) -> tuple[str | None, str | None]:
        """One booking's decision on the compiled state now (the tool harness calls it per
        call and tells the arm each executed one at once, as :meth:`admit` does in a reply)."""
        if not self.enforcing:
            return super().refusal(booking, shaped)
        return self._refusal(booking, shaped, self.gate)

    def _refusal(
        self, booking: Booking, shaped: Shaped, state: TaskState
    ) -> tuple[str | None, str | None]:
        """(why the gate refuses ``booking`` on ``state`` or None, the compiled step named).

        State-bound (Section 3.3): refused iff the step it names is cancelled, done without
        authorization (a budgeted step: with none of its runs left; an expiring step: while
        its run is valid; issue #48), blocked, or closed (its exclusive partner done, #48);
        any other booking is admitted, a code the compile does not know included (the
        compiled state cannot advance on it). Request-bound also refuses any step other than
        the matched one, and a code it cannot place (it cannot tell
        that the booking is the requested step)."""
        v = self._compiled_step(booking)
        request_bound = self.knobs.binding == "request"
        if v is None:
            return (UNKNOWN_STATUS, "?") if request_bound else (None, None)
        status = state.status(v)
        if status == "cancelled" or status == "blocked":
            return status, v
        if state.closed(v):  # its exclusive partner is done (issue #48)
            return "closed", v
        if status == "done" and v not in state.authorized and not state.lapsed(v):
            left = state.remaining(v)  # a budgeted step runs again while runs remain (#48)
            if left is None:
                return "done", v
            if left == 0:
                return "spent", v
        if request_bound and v != shaped.matched_step:
            return UNREQUESTED_STATUS, v
        return None, v

    # --- corrupted-state ablation (Appendix D.4) ---------------------------------------
    def _corrupt(self, turn: Turn) -> None:
        self.corruptions.extend(
            draw_corruptions(self.gate, self._rng, self.knobs.corruption, turn.index, turn.kind)
        )


# The paper's three gates are one session whose row's traits set what it does (its row names
# it by either name): directive (no ``enforcing``), enforce (``enforcing``), hybrid
# (``enforcing`` and ``validated``).
EnforcementGate = DirectiveGate
HybridGate = DirectiveGate
