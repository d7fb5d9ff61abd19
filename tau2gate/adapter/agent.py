"""τ²-bench agents with the gate at tool dispatch, registered through its agent registry.

:class:`GatedAgent` wraps an inner half-duplex agent (τ²-bench's own ``LLMAgent``, or the
scripted :class:`GoldReplayAgent`). Each message the inner agent produces passes the gate
before the orchestrator sees it: a WRITE call the rung holds back (an advisory notice, an
enforcement veto) is answered inside the agent with an ordinary tool message, and the inner
agent is asked again. The held call therefore never reaches τ²-bench's environment, its
trajectory or its evaluation (which replays every write of the trajectory), so READ tools
and the benchmark's scoring are unchanged. The ``shown`` rung appends the rules to the
policy the inner agent is given.

Names registered (:func:`register`): ``ladder-<rung>`` (LLM agent) and ``ladder-gold-<rung>``
(gold replay) for each rung, and the user ``ladder-scripted-user`` (for gold replay).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec

from tau2gate.adapter._tau2 import require_tau2
from tau2gate.adapter.live_tables import LiveState
from tau2gate.domains import get_domain
from tau2gate.gate import RUNGS, Gate, Rung, rules_shown
from tau2gate.rules import RuleSet
from tau2gate.strings import GIVE_UP, HELD_WITH

__all__ = ["GateLog", "current_rules", "register", "set_rules"]

USER_STEPS = "Please do these steps on your device: "
"""OURS: how the gold-replay agent hands the task's user actions to the scripted user."""

STEPS_DONE = "Done."
"""OURS: the scripted user's message after performing the steps it was handed."""

MAX_HELD = 8
"""Consecutive held messages before the agent gives up the turn (OURS)."""


class GateLog(msgspec.Struct, kw_only=True):
    """What the gate did in one episode."""

    vetoes: int = 0
    notices: int = 0
    overrides: int = 0
    violating_writes_dispatched: int = 0
    """Denied writes passed on to τ²-bench (rungs none / shown, advisory overrides); the run
    counts those whose tool result was not an error as executed."""
    violating_call_ids: list[str] = msgspec.field(default_factory=list)
    denied: list[str] = msgspec.field(default_factory=list)


_RULES: dict[str, RuleSet] = {}


def set_rules(rules: RuleSet) -> None:
    """The rule set every gated agent built from now on uses."""
    _RULES["current"] = rules


def current_rules() -> RuleSet:
    if "current" not in _RULES:
        raise RuntimeError("no rule set: call tau2gate.adapter.agent.set_rules first")
    return _RULES["current"]


def _toolkit(tools: list[Any]) -> Any:
    for tool in tools:
        owner = getattr(getattr(tool, "_func", None), "__self__", None)
        if owner is not None and hasattr(owner, "db"):
            return owner
    raise RuntimeError("cannot reach the domain database from the agent's tools")


def _key(call: Any) -> str:
    return str(call.name) + json.dumps(call.arguments, sort_keys=True, default=str)


class _Dispatcher:
    """The gate at dispatch for one episode: holds back calls, keeps the :class:`GateLog`."""

    def __init__(self, rung: Rung, gate: Gate, toolkit: Any) -> None:
        self.rung, self.gate = rung, gate
        self.state = LiveState(lambda: toolkit.db, gate.domain.list_keys)
        self.log = GateLog()
        self._noticed: set[str] = set()

    def hold(self, message: Any) -> list[tuple[Any, str]] | None:
        """``(call, tool result)`` for every call of a held message; ``None``: dispatch it."""
        calls = [c for c in message.tool_calls or [] if c.requestor == "assistant"]
        results: dict[str, str] = {}
        violating: list[str] = []
        for call in calls:
            if call.name not in self.gate.domain.write_tools:
                continue
            verdict = self.gate.check(call.name, call.arguments, self.state)
            key = _key(call)
            decision = self.gate.dispatch(self.rung, verdict, repeated=key in self._noticed)
            if not verdict.admitted:
                self.log.denied.extend(verdict.denied_by)
            if decision.execute:
                if not verdict.admitted:
                    violating.append(str(call.id))
                self.log.overrides += decision.overridden
                continue
            assert decision.result is not None
            results[call.id] = decision.result
            if self.rung == "advisory":
                self._noticed.add(key)
                self.log.notices += 1
            else:
                self.log.vetoes += 1
        if not results:
            self.log.violating_writes_dispatched += len(violating)
            self.log.violating_call_ids.extend(violating)
            return None
        return [(c, results.get(c.id, HELD_WITH)) for c in calls]


class GatedAgent:
    """A half-duplex τ²-bench agent: ``inner`` behind the gate at dispatch."""

    def __init__(self, inner: Any, dispatcher: _Dispatcher) -> None:
        self.inner = inner
        self.dispatcher = dispatcher
        self.tools = inner.tools
        self.domain_policy = inner.domain_policy

    @property
    def gate_log(self) -> GateLog:
        return self.dispatcher.log

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def get_init_state(self, message_history: Any = None) -> Any:
        return self.inner.get_init_state(message_history)

    def generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
        msg_mod = require_tau2("tau2.data_model.message")
        reply, state = self.inner.generate_next_message(message, state)
        for _ in range(MAX_HELD):
            held = self.dispatcher.hold(reply) if reply.is_tool_call() else None
            if held is None:
                return reply, state
            answers = [
                msg_mod.ToolMessage(
                    id=c.id, content=text, role="tool", requestor="assistant", error=False
                )
                for c, text in held
            ]
            feed = (
                answers[0]
                if len(answers) == 1
                else msg_mod.MultiToolMessage(role="tool", tool_messages=answers)
            )
            reply, state = self.inner.generate_next_message(feed, state)
        if reply.is_tool_call() and self.dispatcher.hold(reply) is not None:
            reply = msg_mod.AssistantMessage(role="assistant", content=GIVE_UP)
        return reply, state

    def stop(self, message: Any = None, state: Any = None) -> None:
        stop = getattr(self.inner, "stop", None)
        if stop is not None:
            stop(message, state)

    def set_seed(self, seed: int) -> None:
        setter = getattr(self.inner, "set_seed", None)
        if setter is not None:
            setter(seed)


def _gold_agent_class() -> type:
    base = require_tau2("tau2.agent.base_agent").HalfDuplexAgent
    msg_mod = require_tau2("tau2.data_model.message")

    class GoldReplayAgent(base):  # type: ignore[misc, valid-type]
        """Answers with the task's gold actions, one call per turn, then a closing message
        that carries the task's communicate_info (no LLM). A run of gold actions that are
        the user's (telecom's dual control) is handed to the user as one text message,
        :data:`USER_STEPS` and the actions in JSON, which :class:`ScriptedUser` performs."""

        def __init__(self, tools: list[Any], domain_policy: str, task: Any) -> None:
            super().__init__(tools=tools, domain_policy=domain_policy)
            criteria = task.evaluation_criteria
            self.actions = [] if criteria is None else list(criteria.actions or [])
            info = [] if criteria is None else list(criteria.communicate_info or [])
            self.closing = " ".join(["Done.", *info])

        def get_init_state(self, message_history: Any = None) -> dict[str, int]:
            return {"next": 0}

        def generate_next_message(self, message: Any, state: dict[str, int]) -> tuple[Any, Any]:
            steps: list[dict[str, Any]] = []
            while state["next"] < len(self.actions):
                action = self.actions[state["next"]]
                if action.requestor != "assistant":
                    steps.append({"name": action.name, "arguments": dict(action.arguments)})
                    state["next"] += 1
                    continue
                if steps:
                    break
                state["next"] += 1
                call = msg_mod.ToolCall(
                    id=f"gold-{state['next']}",
                    name=action.name,
                    arguments=dict(action.arguments),
                    requestor="assistant",
                )
                return msg_mod.AssistantMessage(role="assistant", tool_calls=[call]), state
            if steps:
                text = USER_STEPS + json.dumps(steps)
                return msg_mod.AssistantMessage(role="assistant", content=text), state
            return msg_mod.AssistantMessage(role="assistant", content=self.closing), state

        def set_seed(self, seed: int) -> None:
            return None

    return GoldReplayAgent


def _scripted_user_class() -> type:
    user_mod = require_tau2("tau2.user.user_simulator")
    msg_mod = require_tau2("tau2.data_model.message")

    class ScriptedUser(user_mod.UserSimulator):  # type: ignore[misc, name-defined]
        """Opens once; performs the user steps the gold-replay agent hands over (one tool
        call per turn, then ``Done.``); ends the conversation at any other agent text."""

        def generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
            opened = any(getattr(m, "role", "") == "user" for m in state.messages)
            state.messages.append(message)
            queue: list[dict[str, Any]] = self.__dict__.setdefault("_steps", [])
            content = getattr(message, "content", None)
            handed = isinstance(content, str) and content.startswith(USER_STEPS)
            if isinstance(content, str) and handed:
                queue.extend(_steps(content[len(USER_STEPS) :]))
            if queue:
                step = queue.pop(0)
                count = self.__dict__["_count"] = self.__dict__.get("_count", 0) + 1
                call = msg_mod.ToolCall(
                    id=f"user-{count}",
                    name=step["name"],
                    arguments=step["arguments"],
                    requestor="user",
                )
                reply = msg_mod.UserMessage(role="user", tool_calls=[call])
            elif handed or getattr(message, "role", "") == "tool":
                reply = msg_mod.UserMessage(role="user", content=STEPS_DONE)
            else:
                text = user_mod.STOP if opened else get_domain(current_rules().domain).opening
                reply = msg_mod.UserMessage(role="user", content=text)
            state.messages.append(reply)
            return reply, state

    return ScriptedUser


def _steps(text: str) -> list[dict[str, Any]]:
    """The user steps in a :data:`USER_STEPS` message (malformed entries are skipped)."""
    try:
        raw = json.loads(text)
    except ValueError:
        return []
    return [
        {"name": s["name"], "arguments": s.get("arguments") or {}}
        for s in (raw if isinstance(raw, list) else [])
        if isinstance(s, dict)
        and isinstance(s.get("name"), str)
        and isinstance(s.get("arguments", {}), dict)
    ]


def _factory(rung: Rung, gold: bool) -> Callable[..., Any]:
    def build(tools: list[Any], domain_policy: str, **kwargs: Any) -> GatedAgent:
        rules = current_rules()
        policy = domain_policy + "\n\n" + rules_shown(rules) if rung == "shown" else domain_policy
        if gold:
            inner = _gold_agent_class()(tools=tools, domain_policy=policy, task=kwargs["task"])
        else:
            llm_agent = require_tau2("tau2.agent.llm_agent")
            inner = llm_agent.LLMAgent(
                tools=tools,
                domain_policy=policy,
                llm=kwargs.get("llm"),
                llm_args=kwargs.get("llm_args"),
            )
        return GatedAgent(inner, _Dispatcher(rung, Gate(rules), _toolkit(tools)))

    return build


def agent_name(rung: Rung, gold: bool = False) -> str:
    return f"ladder-gold-{rung}" if gold else f"ladder-{rung}"


SCRIPTED_USER = "ladder-scripted-user"


def register() -> None:
    """Register the gated agents and the scripted user with τ²-bench (idempotent)."""
    registry = require_tau2().registry
    for rung in RUNGS:
        for gold in (False, True):
            name = agent_name(rung, gold)
            if registry.get_agent_factory(name) is None:
                registry.register_agent_factory(_factory(rung, gold), name)
    if SCRIPTED_USER not in registry.get_users():
        registry.register_user(_scripted_user_class(), SCRIPTED_USER)
