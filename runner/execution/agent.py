"""The agent call of one model: its endpoint and request settings bound once per run."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence

from protocol.draws import DRAW_HEADER, LINEAGE_HEADER, draw_key
from runner.arms import AgentCall
from runner.client.body import TRANSCRIPT
from runner.client.endpoint import Endpoint, Reply
from runner.client.turn_draw import EPISODE_RUN, TURN_DRAW
from runner.execution.brief_check import BriefLost, brief_lost, brief_text, placed
from runner.grid.expand import Grid
from runner.grid.schema import ModelConfig

__all__ = ["TURN_DRAW", "agent_call", "agent_calls", "trial_seed"]


def agent_call(endpoint: Endpoint, model: ModelConfig, grid: Grid, trial: int = 0) -> AgentCall:
    """``messages -> Reply`` for ``model`` as the agent (its reply budget and regime), the
    brief placed as the model's ``brief_role`` says; the first reply is checked for the
    brief (:mod:`runner.execution.brief_check`: raises :class:`BriefLost`, which stops the
    run). Trial k > 0 of repeated trials sends the sampling seed k (:func:`trial_seed`)."""
    kwargs = model.chat_kwargs(grid.decoding, "agent")
    kwargs["extra"].update(trial_seed(trial))
    checked = False

    def call(messages: list[dict[str, str]]) -> Awaitable[Reply]:
        # as sent: the list itself where the brief stays in the system message (#50: no copy
        # per turn; the endpoint only reads it)
        sent = messages if model.brief_role != "user" else placed(messages, "user")
        turn = TURN_DRAW.get()
        kept = TRANSCRIPT.get()  # the episode's kept encoding: the body built from it (#50)
        if turn is None:  # an arm's own call, or a caller outside an episode
            reply = endpoint.chat(messages=sent, transcript=kept, **kwargs)
        else:
            headers = {DRAW_HEADER: draw_key(*turn, trial=trial)}
            lineage = EPISODE_RUN.get()  # the episode run's token (issue #48)
            if lineage is not None:
                headers[LINEAGE_HEADER] = lineage
            reply = endpoint.chat(messages=sent, headers=headers, transcript=kept, **kwargs)
        if checked:  # the endpoint's own coroutine: no frame of ours on each turn (#50)
            return reply
        return first(reply, sent, brief_text(messages))  # the first reply's check reads it

    async def first(
        reply: Awaitable[Reply], sent: Sequence[Mapping[str, str]], brief: str
    ) -> Reply:
        nonlocal checked
        got = await reply
        if not checked:
            checked = True
            lost = brief_lost(model.name, sent, got.call.prompt_tokens, brief)
            if lost is not None:
                raise BriefLost(lost)
        return got

    return call


def agent_calls(
    grid: Grid, endpoints: Mapping[str, Endpoint], trial: int = 0
) -> dict[str, AgentCall]:
    """The agent call of every model of ``grid`` in trial ``trial``, by model name."""
    return {m.name: agent_call(endpoints[m.endpoint], m, grid, trial) for m in grid.models}


def trial_seed(trial: int) -> dict[str, object]:
    """The request body fields of trial ``trial`` (--trials, #40): none for trial 0 (its
    requests are those of a run without trials, so a run grown from 1 to K trials keeps its
    first), else the OpenAI ``seed`` field, ``trial``: a server that honours it samples each
    trial apart and reproducibly (the embedded endpoint mixes it into its draws; vLLM seeds
    the request's sampler); one that ignores it samples as it would anyway."""
    return {"seed": trial} if trial else {}
