"""Run the rungs on a τ²-bench domain's tasks and score them with its own evaluation.

Each (rung, task, trial) is one τ²-bench simulation built by its ``build_orchestrator``
(our registered agent, its user simulator) and scored by its ``run_simulation``; at most
``concurrency`` simulations run at once (threads, as τ²-bench's own runner does). The agent
and the user simulator reach the grid's OpenAI-compatible endpoint through τ²-bench's LLM
configuration (litellm): model ``openai/<served name>`` with ``api_base`` the base URL.

Evaluation is τ²-bench's ``evaluate_simulation``: ``all`` (its default: every component in
the task's reward basis, including the natural-language assertions some retail tasks carry,
judged by an LLM) or ``env`` (the database and environment assertions only: the check with
no model). The NL-assertion judge is τ²-bench's ``DEFAULT_LLM_NL_ASSERTIONS`` unless
:func:`set_judge` points it at an endpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import msgspec

from scoring.analyses.tau2_paired import EpisodeOutcome, GoldAction, WriteCall, wrongful_writes
from tau2gate.adapter._tau2 import require_tau2
from tau2gate.adapter.agent import SCRIPTED_USER, agent_name, register, set_rules
from tau2gate.airline import DOMAIN as AIRLINE
from tau2gate.domains import get_domain
from tau2gate.gate import Rung
from tau2gate.rules import RuleSet

__all__ = ["EVALUATIONS", "Endpoint", "executed_writes", "llm_args", "run_rung", "set_judge"]

EVALUATIONS: tuple[str, ...] = ("all", "env")
"""τ²-bench evaluation types a run may ask for (``EvaluationType`` values)."""


class Endpoint(msgspec.Struct, frozen=True, kw_only=True):
    """An OpenAI-compatible endpoint and the served model name on it."""

    base_url: str
    model: str
    api_key: str = "EMPTY"
    temperature: float = 0.0


def llm_args(endpoint: Endpoint) -> tuple[str, dict[str, Any]]:
    """τ²-bench's ``(llm, llm_args)`` for an endpoint (litellm's openai provider)."""
    return f"openai/{endpoint.model}", {
        "api_base": endpoint.base_url,
        "api_key": endpoint.api_key,
        "temperature": endpoint.temperature,
    }


def set_judge(endpoint: Endpoint) -> None:
    """Point τ²-bench's NL-assertion judge at ``endpoint`` (its module-level default model and
    arguments, read at each evaluation)."""
    nl = require_tau2("tau2.evaluator.evaluator_nl_assertions")
    model, args = llm_args(endpoint)
    setattr(nl, "DEFAULT_LLM_NL_ASSERTIONS", model)  # noqa: B010 (τ²-bench module globals)
    setattr(nl, "DEFAULT_LLM_NL_ASSERTIONS_ARGS", args)  # noqa: B010


def executed_writes(
    messages: Sequence[Any], write_tools: Sequence[str] = AIRLINE.write_tools
) -> list[WriteCall]:
    """The assistant's write calls in a trajectory whose tool result was not an error."""
    return [call for _, call in _executed(messages, write_tools)]


def _executed(messages: Sequence[Any], write_tools: Sequence[str]) -> list[tuple[str, WriteCall]]:
    results = {m.id: m for m in messages if getattr(m, "role", None) == "tool"}
    calls: list[tuple[str, WriteCall]] = []
    for m in messages:
        if getattr(m, "role", None) != "assistant" or not m.is_tool_call():
            continue
        for c in m.tool_calls:
            result = results.get(c.id)
            if c.name in write_tools and result is not None and not result.error:
                calls.append((str(c.id), WriteCall(name=c.name, arguments=dict(c.arguments))))
    return calls


def _gold(task: Any, write_tools: Sequence[str]) -> list[GoldAction]:
    criteria = task.evaluation_criteria
    return [
        GoldAction(
            name=a.name,
            arguments=dict(a.arguments),
            compare_args=None if a.compare_args is None else tuple(a.compare_args),
        )
        for a in ([] if criteria is None else criteria.actions or [])
        if a.name in write_tools
    ]


def _one(
    config: Any, task: Any, trial: int, seed: int, write_tools: Sequence[str], evaluation: str
) -> EpisodeOutcome:
    build = require_tau2("tau2.runner.build")
    simulation = require_tau2("tau2.runner.simulation")
    kind = require_tau2("tau2.evaluator.evaluator").EvaluationType(evaluation)
    orchestrator = build.build_orchestrator(config, task, seed=seed + trial)
    sim = simulation.run_simulation(orchestrator, evaluation_type=kind)
    log = orchestrator.agent.gate_log
    reward = 0.0 if sim.reward_info is None else float(sim.reward_info.reward)
    executed = _executed(sim.messages or [], write_tools)
    violating = set(log.violating_call_ids)
    return EpisodeOutcome(
        task_id=str(task.id),
        trial=trial,
        reward=reward,
        wrongful_writes=wrongful_writes([c for _, c in executed], _gold(task, write_tools)),
        violating_writes_executed=sum(1 for cid, _ in executed if cid in violating),
        vetoes=log.vetoes,
        notices=log.notices,
        overrides=log.overrides,
    )


def run_rung(
    rung: Rung,
    rules: RuleSet,
    tasks: Sequence[Any],
    *,
    agent: Endpoint | None,
    user: Endpoint | None,
    trials: int = 1,
    concurrency: int = 4,
    max_steps: int = 100,
    seed: int = 300,
    evaluation: str = "all",
) -> list[EpisodeOutcome]:
    """Every (task, trial) of one rung in the rules' domain; ``agent=None``: the gold-replay
    agent, ``user=None``: the scripted user (both without an LLM)."""
    if evaluation not in EVALUATIONS:
        raise ValueError(f"unknown evaluation {evaluation!r} (one of {', '.join(EVALUATIONS)})")
    register()
    set_rules(rules)
    domain = get_domain(rules.domain)
    sim = require_tau2("tau2.data_model.simulation")
    fields: dict[str, Any] = {
        "domain": domain.name,
        "agent": agent_name(rung, gold=agent is None),
        "user": SCRIPTED_USER if user is None else "user_simulator",
        "max_steps": max_steps,
        "num_trials": trials,
        "seed": seed,
    }
    if agent is not None:
        fields["llm_agent"], fields["llm_args_agent"] = llm_args(agent)
    if user is not None:
        fields["llm_user"], fields["llm_args_user"] = llm_args(user)
    config = sim.TextRunConfig(**fields)
    jobs = [(task, trial) for task in tasks for trial in range(trials)]
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        return list(
            pool.map(
                lambda job: _one(config, job[0], job[1], seed, domain.write_tools, evaluation),
                jobs,
            )
        )
