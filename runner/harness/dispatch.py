"""One ACTION through the gate and the tool executor (no LangGraph here; the graph calls it).

``Dispatch`` holds an episode's tools (one per step, named by :func:`protocol.brief.tool_name`
and listed in the brief), its workspace and its arm session. ``call`` takes the ACTIONs of
one reply one by one, in order, each decided by the arm's own gate decision
(:meth:`runner.arms.base.ArmSession.refusal`, the decision the text protocol's ``admit``
makes) on the state the earlier calls produced: an executed call stamps the workspace and is
told to the arm at once (``observe``), so the next call of the same reply is judged after it.

Outcomes: ``executed`` (stamped; the result carries the receipt), ``refused`` (nothing
stamped; the result is the refusal notice), ``repeat`` (the same tool and work order again in
the turn: the execution already made, nothing new), ``stale`` (a work order other than the
current one, or a tool that is not in the brief: nothing executed, nothing returned, as a
stale ref line is a re-display in the text protocol), ``failed`` (the tool_failure knob,
:mod:`protocol.stress.tool_failure`: the tool failed before it executed; nothing stamped, the arm not
told, and the same call may be retried in the turn: it goes through the gate again, and only
a retry that succeeds stamps).

At-most-once (the ``tool_failure_landed`` knob, issue #37; OURS): a ``landed`` failure is a
timeout whose write landed: the workspace holds its stamp (the log keeps the receipt, and the
scorer counts it as an execution), the agent reads the same "outcome unknown" timeout as for
one that wrote nothing, and the arm is not told at once: the gate saw a failed call, so its
state and the workspace disagree. With the knob on, the harness lists a read-only status
tool (``strings.STATUS_TOOL``): a call of it is answered from the workspace
(:meth:`Workspace.writes`), goes through no gate, executes nothing, never fails, and is
logged with outcome ``status``. The gate does what a careful agent does: before it judges
the next call (and before the next turn is shaped) it reads the same status for every call
that timed out and tells the arm (``observe``) of each write that landed
(:meth:`Dispatch.reconcile`); so enforcement refuses a retry of a landed write as a step
already done, and a gate that cannot refuse lets it through, a duplicate write the scorer
counts as a re-execution (docs/stress.md, "At-most-once").

Escalation (the ``escalate`` knob, issue #38; :mod:`protocol.arms.askback`): a call the gate
refuses goes to the scripted user (``arm.ctx.principal``), whose confirmation admits it once
(it executes as any admitted call); every escalation of the turn is kept in
``escalations``.
"""

from __future__ import annotations

import msgspec

from protocol import strings
from protocol.arms.render import (
    render_status,
    render_tool_failure,
    render_tool_rejection,
    render_tool_result,
)
from protocol.brief import tool_name
from protocol.records import Booking, Episode, Escalation, ToolCall, Turn
from protocol.state.receipts import Action, normalize_work_order
from protocol.stress.tool_failure import LANDED, FailureKind, draw_tool_failure
from runner.arms.base import ArmSession, Shaped
from runner.harness.workspace import Workspace

__all__ = ["Dispatch"]


class Dispatch:
    def __init__(self, episode: Episode, arm: ArmSession, workspace: Workspace) -> None:
        self.arm = arm
        self.workspace = workspace
        self.tools = {tool_name(s): s for s in episode.steps}
        self._seen: set[tuple[str, str]] = set()
        self._failed: dict[tuple[str, str], int] = {}  # failures of a call in this turn
        self.spec = episode.spec
        self.cell = arm.ctx.cell
        self.escalations: list[Escalation] = []  # this turn's (the escalate knob)
        self._executed: list[str] = []  # steps executed on this turn
        # the at-most-once knob: the status tool is listed; timed-out calls not yet reconciled
        self.status_tool = self.cell.knobs.tool_failure_landed > 0
        self._unresolved: list[tuple[Turn, ToolCall, Booking]] = []

    def begin_turn(self) -> None:
        self.reconcile()
        self._seen.clear()
        self._failed.clear()
        self.escalations = []
        self._executed = []

    def decide(
        self, turn: Turn, shaped: Shaped, action: Action, reply: int
    ) -> tuple[ToolCall, Booking | None, str | None]:
        """The gate: (the logged call, its booking unless stale, the refusal notice or None).
        A call the gate admits comes back with outcome ``executed`` and no receipt yet: the
        executor (:meth:`execute`) stamps it. A call of the status tool (when listed) comes
        back with outcome ``status`` and its result in place of a notice."""
        if self.status_tool and action.tool == strings.STATUS_TOOL:
            return self._status(action, reply)
        self.reconcile()
        step = self.tools.get(action.tool)
        wo = normalize_work_order(action.work_order) or action.work_order
        logged = ToolCall(
            tool=action.tool, work_order=wo, step=step.id if step else None, reply=reply
        )
        if step is None or wo != turn.work_order:
            return _with(logged, outcome="stale"), None, None
        booking = Booking(step=step.id, code=step.code, work_order=wo)
        if (action.tool, wo) in self._seen:
            return _with(logged, outcome="repeat"), booking, None
        self._seen.add((action.tool, wo))
        status, named = self.arm.refusal(booking, shaped)
        if status is not None and self.cell.knobs.escalate:
            status = self._escalate(booking, status, named)
        if status is not None:
            notice = render_tool_rejection(action.tool, wo, status, named)
            refused = _with(logged, outcome="refused", status=status, named=named)
            return refused, booking, notice
        return logged, booking, None

    def execute(self, turn: Turn, call: ToolCall, booking: Booking) -> tuple[ToolCall, str]:
        """The tool executor: stamp the workspace, tell the arm; (the call with its receipt,
        the tool result). With the tool_failure knob the call may fail first: (the call with
        outcome ``failed`` and its kind as ``status``, the failure result)."""
        key = (call.tool, call.work_order)
        kind = self._failure(turn, call, self._failed.get(key, 0))
        if kind is not None:
            self._failed[key] = self._failed.get(key, 0) + 1
            self._seen.discard(key)  # a retry is judged again (see reconcile)
            if kind == "partial":
                self.workspace.partial_write(call.tool, call.work_order)
            failed = _with(call, outcome="failed", status=kind)
            if kind == LANDED:  # the write landed; the caller hears a timeout
                receipt = self.workspace.stamp(call.tool, call.work_order)
                failed = _with(failed, receipt=receipt)
                if booking.step is not None:
                    self._executed.append(booking.step)
            if kind in ("timeout", LANDED) and self.status_tool:
                self._unresolved.append((turn, failed, booking))
            result = render_tool_failure(call.tool, call.work_order, kind, self.status_tool)
            return failed, result
        receipt = self.workspace.stamp(call.tool, call.work_order)
        if booking.step is not None:
            self._executed.append(booking.step)
        self.arm.observe(turn, [booking], "")
        result = render_tool_result(call.tool, call.work_order, receipt)
        return _with(call, receipt=receipt), result

    def reconcile(self) -> None:
        """The gate reads the status of every call that timed out since it last looked and
        advances on each write that landed (``observe``), as a careful agent would before a
        retry: after it, the gate's state and the workspace agree again."""
        pending, self._unresolved = self._unresolved, []
        for turn, call, booking in pending:
            if call.tool in self.workspace.writes(call.work_order):
                self.arm.observe(turn, [booking], "")

    def _status(self, action: Action, reply: int) -> tuple[ToolCall, None, str]:
        """The read-only status tool: the tools whose write the workspace holds for the
        work order asked (none for a text that is no work order). No gate, no failure."""
        wo = normalize_work_order(action.work_order)
        tools = self.workspace.writes(wo) if wo is not None else []
        logged = ToolCall(
            tool=action.tool, work_order=wo or action.work_order, step=None, reply=reply,
            outcome="status",
        )  # fmt: skip
        return logged, None, render_status(wo or action.work_order, tools)

    def _escalate(self, booking: Booking, status: str, named: str | None) -> str | None:
        """The refusal put to the user: None (admitted once) when the user confirms."""
        principal = self.arm.ctx.principal
        if principal is None:
            raise RuntimeError("the escalate knob needs the scripted user (ctx.principal)")
        confirmed = principal.escalation(booking, self._executed)
        self.escalations.append(
            Escalation(booking=booking, status=status, step=named, confirmed=confirmed)
        )
        return None if confirmed else status

    def _failure(self, turn: Turn, call: ToolCall, attempt: int) -> FailureKind | None:
        rate = self.cell.knobs.tool_failure
        return draw_tool_failure(
            self.spec,
            self.cell.model,
            self.cell.regime,
            rate,
            turn=turn.index,
            tool=call.tool,
            work_order=call.work_order,
            attempt=attempt,
            landed=self.cell.knobs.tool_failure_landed,
        )


def _with(call: ToolCall, **fields: object) -> ToolCall:
    return msgspec.structs.replace(call, **fields)
