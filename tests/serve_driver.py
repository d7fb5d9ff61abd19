"""Drive generated episodes turn by turn against the scripted endpoint (tests of serve/).

The arm logic here is a deliberately small stand-in for runner/arms, enough to show the
agents each prompt variant: raw transcript, checklist (append / replace), checklist plus
matched-step line, directive (user or system role, optionally corrupted), self-ledger, tools, and a state-bound enforcement gate
on the realized state (optionally also refusing the first ``refuse`` correct bookings), with
the notice on the next turn or the same turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

from protocol import EpisodeSpec, ScriptedUser, Turn, Verdict, generate, strings
from protocol.arms.render import (
    compose_user_message,
    render_checklist,
    render_directive,
    render_ledger,
    render_rejection,
)
from protocol.brief import render_brief
from protocol.records import Booking
from protocol.state.bookings import read_execution
from protocol.state.machine import Error
from protocol.state.receipts import parse_ledger

__all__ = ["Outcome", "chat", "drive"]

Corrupt = Callable[[Turn, Verdict], Verdict]


@dataclass
class Outcome:
    errors: list[tuple[int, str, Error]] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    fingerprints: set[str] = field(default_factory=set)


async def chat(
    session: aiohttp.ClientSession,
    url: str,
    model: str,
    messages: list[dict[str, str]],
    thinking: bool = False,
) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": messages, "temperature": 0}
    body["max_tokens"] = 2500 if thinking else 400
    if thinking:
        body["chat_template_kwargs"] = {"enable_thinking": True}
    async with session.post(f"{url}/chat/completions", data=orjson.dumps(body)) as resp:
        assert resp.status == 200, await resp.text()
        out: dict[str, Any] = orjson.loads(await resp.read())
        return out


def _content(resp: dict[str, Any]) -> tuple[str, str]:
    choice = resp["choices"][0]
    return choice["message"]["content"], str(resp.get("system_fingerprint"))


async def drive(
    session: aiohttp.ClientSession,
    url: str,
    spec: EpisodeSpec,
    *,
    model: str = "scripted/perfect",
    arm: str = "raw",
    replace: bool = False,
    system_role: bool = False,
    corrupt: Corrupt | None = None,
    refuse: int = 0,
    same_turn: bool = False,
    thinking: bool = False,
) -> Outcome:
    """Play one episode; every turn's errors against ScriptedUser's ground truth."""
    ep = generate(spec)
    tools = arm == "tools"
    brief = render_brief(ep.steps, spec.brief, ledger=arm == "ledger", tools=tools)
    user = ScriptedUser(ep)
    history: list[dict[str, str]] = []
    ledger: dict[str, str] = {}
    notices: list[str] = []
    out = Outcome()
    while (turn := user.next_turn()) is not None:
        verdict = user.begin(turn)
        addition, system = "", brief
        if arm == "checklist":
            addition = render_checklist(user.state)
        elif arm == "ledger":
            addition = render_ledger(ledger, ep.steps)
        elif arm == "matched":  # Appendix E.2: checklist plus the matched step, no instruction
            lines = [render_checklist(user.state)]
            if turn.step is not None:
                lines.append(strings.MATCHED_STEP_LINE.format(id=turn.step))
            addition = "\n".join(lines)
        elif arm == "directive" and turn.step is not None and verdict is not None:
            shown = corrupt(turn, verdict) if corrupt else verdict
            directive = render_directive(turn.step, shown)
            if system_role:
                system = f"{brief}\n\n{directive}"
            else:
                addition = directive
        sent = compose_user_message(turn.text, notices=notices, addition=addition)
        kept = compose_user_message(turn.text, notices=notices) if replace else sent
        notices = []
        messages = [
            {"role": "system", "content": system},
            *history,
            {"role": "user", "content": sent},
        ]
        reply, fp = _content(await chat(session, url, model, messages, thinking))
        bookings = list(read_execution(reply, ep, turn.work_order, tools=tools).bookings)
        refused: list[Booking] = []
        if arm == "enforce":
            refused = [b for b in bookings if _violates(user, b)]
            if bookings and not refused and refuse > 0:  # a corrupted gate refuses a good one
                refused, refuse = bookings, refuse - 1
            bookings = [b for b in bookings if b not in refused]
            rejections = [render_rejection(b, _status(user, b)) for b in refused]
            if refused and same_turn:
                retry = compose_user_message(turn.text, notices=rejections, addition=addition)
                messages += [
                    {"role": "assistant", "content": reply},
                    {"role": "user", "content": retry},
                ]
                reply, fp = _content(await chat(session, url, model, messages, thinking))
                again = read_execution(reply, ep, turn.work_order, tools=tools).bookings
                assert not again, f"rebooked after a same-turn rejection: {reply!r}"
            else:
                notices = rejections
        executed = [b.step for b in bookings if b.step is not None]
        for e in user.finish(turn, verdict, executed):
            out.errors.append((turn.index, turn.kind, e))
        ledger.update(parse_ledger(reply))
        out.replies.append(reply)
        out.fingerprints.add(fp)
        history += [{"role": "user", "content": kept}, {"role": "assistant", "content": reply}]
    return out


def _status(user: ScriptedUser, b: Booking) -> str:
    return user.state.status(b.step) if b.step else "unknown"


def _violates(user: ScriptedUser, b: Booking) -> bool:
    """State-bound enforcement on the realized state at the start of the turn."""
    return b.step is None or user.state.verdict(b.step).label not in ("eligible", "redo")


def view_fields(view: Any) -> tuple[Any, ...]:
    """Everything a scripted agent's view (``serve.agents.reading.View``) holds, comparable."""
    state = view.state
    return (
        view.brief,
        view.history,
        view.user,
        view.request,
        view.directive,
        view.checklist,
        view.matched,
        view.ledger_shown,
        view.rejected_now,
        view.work_order,
        (state.done, state.cancelled, state.deps, state.authorized),
    )
