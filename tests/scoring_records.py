"""Golden episode records for the scoring tests.

Episodes come from the generator; the agent's behaviour is decided by hand, turn by turn
(a *policy*), and written as replies with ref lines (``ref {code}/{wo}``) or ACTION lines.
:func:`build` plays the policy against the scripted user the way the runner does (the world
admits every booking of the current work order with a known code unless the policy says the
gate refused it; admitted bookings enter the realized state) and returns the EpisodeRecord
the runner would log. The tests then state the labels, channels and verdicts they expect.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from protocol import (
    Booking,
    CellKey,
    Episode,
    EpisodeRecord,
    EpisodeSpec,
    Knobs,
    ScriptedUser,
    Turn,
    TurnRecord,
    Verdict,
    generate,
)
from protocol.brief import tool_name
from protocol.records import scripted_fields
from protocol.state.bookings import read_execution

__all__ = [
    "Act",
    "Policy",
    "action_line",
    "build",
    "cell",
    "episode",
    "perfect",
    "perfect_reply",
    "ref_line",
]


@dataclass(frozen=True)
class Act:
    """What the agent wrote on one turn, and what the gate refused."""

    reply: str
    first_reply: str | None = None  # same-turn notice: the reply the gate refused
    refuse: tuple[str, ...] = ()  # steps whose bookings the gate refused


Policy = Callable[[Turn, Verdict | None], Act]


def cell(arm: str = "raw", spec: EpisodeSpec | None = None, **knobs: object) -> CellKey:
    spec = spec or EpisodeSpec(seed=0, steps=6, density=0.15)
    return CellKey(
        model="scripted/golden",
        steps=spec.steps,
        density=spec.density,
        domain=spec.domain,
        brief=spec.brief,
        arm=arm,
        knobs=Knobs(**knobs),  # type: ignore[arg-type]
    )


def ref_line(ep: Episode, step: str, wo: str | None) -> str:
    return f"ref {ep.step(step).code}/{wo}"


def action_line(ep: Episode, step: str, wo: str | None) -> str:
    return f'ACTION {{"tool": "{tool_name(ep.step(step))}", "work_order": "{wo}"}}'


def perfect_reply(ep: Episode, turn: Turn, verdict: Verdict | None, tools: bool = False) -> str:
    """A perfect agent's reply: book the step iff eligible or an authorized redo."""
    label = verdict.label if verdict is not None else None
    v = turn.step
    if v is None or label is None:
        return "Noted, thanks."
    if label in ("eligible", "redo"):
        line = action_line(ep, v, turn.work_order) if tools else ref_line(ep, v, turn.work_order)
        return f"Done: {ep.step(v).text}.\n{line}"
    if label == "done":
        return f"Step {v} is already done; no new booking."
    if label == "blocked":
        assert verdict is not None
        return f"Step {v} is blocked: missing {', '.join(verdict.missing)}."
    return f"Step {v} was cancelled, so I will not perform it."


def perfect(
    ep: Episode,
    overrides: Mapping[int, Act | Callable[[Turn, Verdict | None], Act]] = {},
    tools: bool = False,
) -> Policy:
    """The perfect policy, with hand-decided acts on the listed turn indices."""

    def policy(turn: Turn, verdict: Verdict | None) -> Act:
        override = overrides.get(turn.index)
        if override is None:
            return Act(perfect_reply(ep, turn, verdict, tools))
        return override if isinstance(override, Act) else override(turn, verdict)

    return policy


def _bookings(ep: Episode, text: str, wo: str | None, tools: bool) -> list[Booking]:
    return list(read_execution(text, ep, wo, tools=tools).bookings)


def build(
    ep: Episode,
    key: CellKey,
    policy: Policy,
    *,
    termination: str = "completed",
    stop_after: int | None = None,
) -> EpisodeRecord:
    """Play *policy* on *ep* as the runner would and return the logged record."""
    user = ScriptedUser(ep)
    turns: list[TurnRecord] = []
    tools = key.knobs.tools
    while (turn := user.next_turn()) is not None:
        if stop_after is not None and len(turns) >= stop_after:
            break
        verdict = user.begin(turn)
        act = policy(turn, verdict)
        texts = [t for t in (act.first_reply, act.reply) if t is not None]
        found = {
            (b.code, b.work_order): b
            for t in texts
            for b in _bookings(ep, t, turn.work_order, tools)
        }
        refused = tuple(b for b in found.values() if b.step in act.refuse)
        admitted = tuple(b for b in found.values() if b not in refused)
        user.finish(turn, verdict, [b.step for b in admitted if b.step is not None])
        turns.append(
            TurnRecord(
                **scripted_fields(turn),
                sent_text=turn.text,
                reply=act.reply,
                admitted=admitted,
                refused=refused,
                first_reply=act.first_reply,
            )
        )
    return EpisodeRecord(
        cell=key,
        spec=ep.spec,
        turns=tuple(turns),
        termination=termination,  # type: ignore[arg-type]
        error=None if termination == "completed" else "HTTP 503 after 6 attempts",
    )


def episode(seed: int = 0, steps: int = 6, density: float = 0.15, **kw: object) -> Episode:
    return generate(EpisodeSpec(seed=seed, steps=steps, density=density, **kw))  # type: ignore[arg-type]
