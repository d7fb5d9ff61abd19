"""The trap-turn probe (Appendix A.4, Table 3): trap turns of a logged episode, the exact
messages the agent saw before each, and the variants that change one thing about them.

Pure functions over an :class:`~protocol.records.EpisodeRecord` and the episode it ran
(``protocol.episode.generate(record.spec, paraphrases)``); no I/O. The messages the agent saw before
a trap turn are rebuilt by :func:`protocol.probe.history.rebuild_messages`, byte for byte as the runner sent them. Variants (:data:`VARIANTS`) each change exactly
one thing: the form of the request, where the task state is shown, or the agent's own
earlier booking line (docs/probe.md gives each reading and what is ours).
"""

from __future__ import annotations

import re
from typing import Literal, get_args

import msgspec

from protocol import strings
from protocol.arms.render import render_checklist, render_directive
from protocol.brief import tool_name
from protocol.episode.versions import pool_of
from protocol.probe.history import (
    Messages,
    books_with_actions,
    is_harness,
    realized_states,
    rebuild_messages,
)
from protocol.records import Episode, EpisodeRecord, TurnKind, TurnRecord
from protocol.state.bookings import read_execution
from protocol.state.machine import TaskState
from protocol.state.receipts import find_actions, find_refs, normalize_work_order

__all__ = [
    "TRAP_KINDS",
    "VARIANTS",
    "Decoding",
    "ProbeRecord",
    "TrapTurn",
    "Variant",
    "booked_step",
    "find_traps",
    "strip_work_order",
    "variant_messages",
]

Variant = Literal[
    "as_recorded",
    "confirm",
    "status",
    "no_work_order",
    "checklist_user",
    "checklist_system",
    "directive_user",
    "directive_system",
    "prose",
    "erased",
]
VARIANTS: tuple[Variant, ...] = get_args(Variant)
# The trap kinds a probe may branch at; the paper's probe takes the redo probes.
TRAP_KINDS: tuple[TurnKind, ...] = ("redo_probe", "premature", "superseded_cue", "ambiguous")
# The status a turn's step must have on the realized state for the turn to be a trap: a redo
# probe is a trap only while its step is done ("a fresh work order for a step already done";
# a redo probe of a step the agent omitted is an eligible ask), and so on.
_TRAP_STATUS: dict[str, str | None] = {
    "redo_probe": "done",
    "premature": "blocked",
    "superseded_cue": "cancelled",
    "ambiguous": None,
}


class TrapTurn(msgspec.Struct, frozen=True, kw_only=True):
    """One trap turn of a logged episode."""

    position: int  # the turn's position in ``record.turns``
    index: int  # the turn's index (``TurnRecord.index``)
    kind: TurnKind
    step: str | None
    work_order: str | None
    # The position of the latest earlier turn whose admitted bookings hold the step (the
    # agent's own execution record that the prose / erased variants change); None if none.
    booked_at: int | None
    recorded_rebooked: bool  # the recorded reply booked the step with the turn's work order


def _rebooked(record: EpisodeRecord, episode: Episode, t: TurnRecord) -> bool:
    if t.step is None:
        return False
    read = read_execution(t.reply, episode, t.work_order, tools=books_with_actions(record))
    return any(b.step == t.step for b in read.bookings)


def find_traps(
    record: EpisodeRecord,
    episode: Episode,
    kinds: tuple[TurnKind, ...] = ("redo_probe",),
    states: list[TaskState] | None = None,
) -> list[TrapTurn]:
    """The trap turns of ``kinds`` in ``record`` (a redo probe only while its step is done
    on the realized state; a premature ask while blocked; a status cue while cancelled)."""
    states = states if states is not None else realized_states(record, episode)
    out: list[TrapTurn] = []
    for pos, t in enumerate(record.turns):
        if t.kind not in kinds:
            continue
        need = _TRAP_STATUS.get(t.kind)
        if need is not None and (t.step is None or states[pos].status(t.step) != need):
            continue
        booked_at = None
        if t.step is not None:
            for earlier in range(pos - 1, -1, -1):
                if any(b.step == t.step for b in record.turns[earlier].admitted):
                    booked_at = earlier
                    break
        out.append(
            TrapTurn(
                position=pos,
                index=t.index,
                kind=t.kind,
                step=t.step,
                work_order=t.work_order,
                booked_at=booked_at,
                recorded_rebooked=_rebooked(record, episode, t),
            )
        )
    return out


_WO_PAREN = re.compile(r"\s*\(#W\d{4}\)")
_WO_LEAD = re.compile(r"^Work order #W\d{4}:\s*")
_WO_ANY = re.compile(r"\s*#W\d{4}")


def strip_work_order(text: str) -> str:
    """The request without its work order (OURS): "(#W1234)" dropped, a leading
    "Work order #W1234: " dropped (the next letter capitalized), any other "#W1234" dropped."""
    out = _WO_PAREN.sub("", text)
    if _WO_LEAD.match(out):
        out = _WO_LEAD.sub("", out)
        out = out[:1].upper() + out[1:]
    return _WO_ANY.sub("", out)


def _replace_user_text(t: TurnRecord, text: str) -> str:
    """The turn's message as sent with the scripted user's text replaced by ``text`` (the
    notices before it and the arm's addition after it unchanged)."""
    before, sep, after = t.sent_text.partition(t.user_text)
    if not sep:
        raise ValueError(f"turn {t.index}: the sent message does not hold the user's text")
    return before + text + after


def booked_step(record: EpisodeRecord, episode: Episode, trap: TrapTurn) -> tuple[int, str] | None:
    """(position, reply) of the agent's own earlier booking of the trap's step (what the
    prose / erased variants change); None in the tool harness, whose execution record is
    also the tool's result message (docs/probe.md)."""
    if trap.booked_at is None or trap.step is None or is_harness(record):
        return None
    t = record.turns[trap.booked_at]
    return trap.booked_at, t.reply


def _booking_lines(reply: str, code: str, tool: str | None, work_order: str | None) -> list[str]:
    """The lines of ``reply`` that book the step: its ``ref`` lines, or with ``tool`` (the
    tools knob) its ``ACTION`` lines, under ``work_order``."""
    if tool is None:
        found = [r.line for r in find_refs(reply) if r.code == code and r.work_order == work_order]
        return list(dict.fromkeys(found))
    lines: list[str] = []
    for a in find_actions(reply):
        if a.tool != tool or normalize_work_order(a.work_order) != work_order:
            continue
        start = reply.rfind("\n", 0, a.start) + 1
        end = reply.find("\n", a.start)
        lines.append(reply[start : len(reply) if end < 0 else end].rstrip("\r"))
    return list(dict.fromkeys(lines))


def _rewrite_booking(
    record: EpisodeRecord, episode: Episode, trap: TrapTurn, prose: bool
) -> str | None:
    found = booked_step(record, episode, trap)
    if found is None or trap.step is None:
        return None
    pos, reply = found
    step = episode.step(trap.step)
    wo = record.turns[pos].work_order
    tool = tool_name(step) if record.cell.knobs.tools else None
    lines = _booking_lines(reply, step.code, tool, wo)
    if not lines:
        return None
    if tool is None:
        new = strings.PROBE_PROSE_BOOKING.format(id=step.id, text=step.text, wo=wo, code=step.code)
    else:
        new = strings.PROBE_PROSE_TOOL_BOOKING.format(id=step.id, text=step.text, wo=wo, tool=tool)
    out: list[str] = []
    for line in reply.split("\n"):
        if line.rstrip("\r") in lines:
            if prose:
                out.append(new)
            continue
        out.append(line)
    return "\n".join(out)


def variant_messages(
    record: EpisodeRecord,
    episode: Episode,
    trap: TrapTurn,
    variant: Variant,
    state: TaskState,
) -> Messages | None:
    """The trap turn's messages under ``variant`` (``state``: the realized state at the
    turn), or None where the variant does not apply (no booking line of the step in the
    history for prose / erased; a turn without a step for the wordings and the directive)."""
    messages = rebuild_messages(record, episode, trap.position)
    t = record.turns[trap.position]
    last = messages[-1]
    if variant == "as_recorded":
        return messages
    if variant in ("confirm", "status"):
        if trap.step is None or trap.work_order is None:
            return None
        s = episode.step(trap.step)
        if variant == "confirm":
            text = strings.PROBE_CONFIRM.format(text=s.text, wo=trap.work_order)
        else:
            pool = {tp.slug: tp for tp in pool_of(episode.spec).templates}
            wordings = pool[s.slug].status
            text = wordings[trap.index % len(wordings)].format(wo=trap.work_order)
        last["content"] = _replace_user_text(t, text)
        return messages
    if variant == "no_work_order":
        if trap.work_order is None:
            return None
        last["content"] = _replace_user_text(t, strip_work_order(t.user_text))
        return messages
    if variant in ("checklist_user", "checklist_system", "directive_user", "directive_system"):
        if variant.startswith("checklist"):
            shown = render_checklist(state)
        else:
            if trap.step is None:
                return None
            shown = render_directive(trap.step, state.verdict(trap.step))
        target = last if variant.endswith("_user") else messages[0]
        target["content"] = target["content"] + "\n\n" + shown
        return messages
    # prose / erased: the agent's own earlier booking reply
    rewritten = _rewrite_booking(record, episode, trap, prose=variant == "prose")
    if rewritten is None or trap.booked_at is None:
        return None
    original = record.turns[trap.booked_at].reply
    # the reply's message in the rebuilt list (absent when a memory window cut it)
    hits = [
        i for i, m in enumerate(messages) if m["role"] == "assistant" and m["content"] == original
    ]
    at = _reply_slot(record, trap, len(messages))
    if at is None or at not in hits:
        return None
    messages[at]["content"] = rewritten
    return messages


def _reply_slot(record: EpisodeRecord, trap: TrapTurn, n: int) -> int | None:
    """The index, in the rebuilt list of ``n`` messages, of the booking turn's reply."""
    if trap.booked_at is None:
        return None
    # full history: system, then two messages per earlier turn, then the turn's own message
    full = 1 + 2 * trap.position + 1
    cut = full - n  # messages the memory window dropped (after the system prompt)
    at = 1 + 2 * trap.booked_at + 1 - cut
    return at if at >= 1 else None


Decoding = Literal["greedy", "sampled"]


class ProbeRecord(msgspec.Struct, frozen=True, kw_only=True, tag="probe"):
    """One re-ask of a trap turn: one JSON line of ``PROBE_DIR/probe.jsonl``."""

    episode_id: str  # "<cell slug>/<seed>" of the logged episode
    slug: str
    seed: int
    model: str
    arm: str
    position: int  # the trap turn's position in the logged episode
    turn: int  # its turn index
    kind: TurnKind
    step: str | None
    work_order: str | None
    variant: str
    decoding: Decoding
    sample: int  # 0 for the greedy re-ask; 0..samples-1 for the sampled ones
    temperature: float
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    harness: str = "text"  # the episode's harness ("langgraph": the paper's "with tools")
    reply: str
    reasoning: str = ""
    reexecuted: bool  # booked the trap's step with the request's work order
    said_done: bool
    said_done_then_booked: bool
    recorded_rebooked: bool  # the logged reply of the turn re-executed
    prompt_tokens: int = 0
    completion_tokens: int = 0
    synthetic: bool = False  # answered by the scripted synthetic agent

    def key(self) -> tuple[str, int, str, str, int]:
        return (self.episode_id, self.turn, self.variant, self.decoding, self.sample)
