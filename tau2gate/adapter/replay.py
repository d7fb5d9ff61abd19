"""Gold replay, no LLM: every gold write action of a domain's tasks through the gate.

Each task's environment is set up as τ²-bench sets it up for evaluation (its initial state),
then its gold actions run in order; before each gold WRITE action the gate judges it in the
database state it would meet. A gold write the gate denies is an over-block; one whose own
tool call then fails in τ²-bench (``tool_rejects``: the benchmark's tool refuses it too, so it
changes nothing) is reported as such.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from tau2gate.adapter._tau2 import require_tau2
from tau2gate.adapter.live_tables import LiveState
from tau2gate.gate import Gate
from tau2gate.rules import RuleSet

__all__ = ["GoldWrite", "domain_tasks", "gold_replay", "initial_environment"]


class GoldWrite(msgspec.Struct, frozen=True, kw_only=True):
    """One gold write action and the rules that denied it (none: admitted)."""

    task_id: str
    action_id: str
    tool: str
    denied_by: tuple[str, ...] = ()
    tool_rejects: bool = False
    """τ²-bench's own tool raised on this gold action (it changed no state)."""


def domain_tasks(domain: str, split: str | None = "base") -> list[Any]:
    """The tasks of a τ²-bench domain's task split (``None``: every task)."""
    registry = require_tau2().registry
    return list(registry.get_tasks_loader(domain)(split))


def initial_environment(task: Any, domain: str = "airline") -> Any:
    """A fresh environment of ``domain`` in the task's initial state."""
    registry = require_tau2().registry
    env = registry.get_env_constructor(domain)()
    init = task.initial_state
    env.set_state(
        initialization_data=None if init is None else init.initialization_data,
        initialization_actions=None if init is None else init.initialization_actions,
        message_history=[]
        if init is None or init.message_history is None
        else init.message_history,
    )
    return env


def _db_of(env: Any) -> Callable[[], Any]:
    return lambda: env.tools.db


def gold_replay(rules: RuleSet, tasks: list[Any]) -> list[GoldWrite]:
    """Every gold write of ``tasks`` judged by the gate under ``rules`` (in their domain),
    in task order."""
    gate = Gate(rules)
    out: list[GoldWrite] = []
    for task in tasks:
        env = initial_environment(task, gate.domain.name)
        state = LiveState(_db_of(env), gate.domain.list_keys)
        criteria = task.evaluation_criteria
        for action in [] if criteria is None else criteria.actions or []:
            judged = action.name in gate.domain.write_tools and action.requestor == "assistant"
            verdict = gate.check(action.name, action.arguments, state) if judged else None
            try:
                env.make_tool_call(action.name, requestor=action.requestor, **action.arguments)
                env.sync_tools()  # as τ²-bench's get_response does after every call
                rejected = False
            except Exception:  # a gold action that errors leaves the state as τ²-bench does
                rejected = True
            if verdict is not None:
                out.append(
                    GoldWrite(
                        task_id=str(task.id),
                        action_id=str(action.action_id),
                        tool=action.name,
                        denied_by=verdict.denied_by,
                        tool_rejects=rejected,
                    )
                )
    return out
