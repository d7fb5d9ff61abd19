"""What the viewer's index keeps of an episode beside its score (#50): the few counts its list
row and its cell's cost need, gathered in one walk over the record's calls. Pure.

:func:`episode_facts` reads them; :func:`scoring.display.episode_views.facts_row` builds the
list row from them (``episode_row`` of a record is that) when a page asks for it, its
helper counts and tokens those of :func:`scoring.analyses.cost.cost_rows`' one-episode row;
:func:`facts_cell_cost` is :func:`scoring.display.run_overview.cell_cost` over the cell's
one-episode rows (tests pin both equalities). A one-episode cost row
is a cell's means over one episode: its counts as they are, which is all the overview reads
of it; the whole row (latencies, ask-back burden, ...) is built again from the record when
the episode is opened.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import msgspec

from protocol.records import EpisodeRecord
from scoring.analyses.handed import agent_calls
from scoring.display.models import CellCost

__all__ = ["EpisodeCost", "EpisodeFacts", "episode_facts", "facts_cell_cost"]


class EpisodeCost(msgspec.Struct, frozen=True, array_like=True):
    """A completed episode's counts as :func:`scoring.analyses.cost.cost_rows` tallies them."""

    prompt: int  # the cell model's agent calls (a next_model's are counted apart)
    completion: int
    agent_calls: int
    helper_tokens: int  # the helper calls the arm needs (made, or served and shared)
    matcher_made: int
    matcher_cached: int
    compiler_made: int
    compiler_cached: int


class EpisodeFacts(msgspec.Struct, frozen=True, array_like=True):
    """What an episode's list row and its cell's cost read of its record."""

    turns: int
    agent_tokens: int  # the agent calls that made a request (the row's tokens)
    helper_tokens: int  # the helper requests the episode made (a row without a cost)
    wall_s: float
    corruptions: int
    cost: EpisodeCost | None  # None: not completed (cost counts completed episodes)


def _handed_agent(record: EpisodeRecord) -> tuple[int, int, int]:
    """(prompt, completion, calls) of the cell model's own agent calls under a handoff."""
    prompt = completion = calls = 0
    for call, theirs in agent_calls(record):
        if not theirs:
            prompt += call.prompt_tokens
            completion += call.completion_tokens
            calls += 1
    return prompt, completion, calls


def episode_facts(record: EpisodeRecord) -> EpisodeFacts:
    """The record's facts, its calls walked once (a handoff's agent calls twice)."""
    prompt = completion = calls = agent = made = needed = 0
    helpers = {r: [0, 0] for r in ("matcher", "compiler", "memory", "embedding", "rewriter")}
    for turn in record.turns:
        for c in turn.calls:
            tokens = c.prompt_tokens + c.completion_tokens
            if c.role == "agent":
                prompt += c.prompt_tokens
                completion += c.completion_tokens
                calls += 1
                agent += 0 if c.cached else tokens
                continue
            helpers[c.role][c.cached] += 1  # [made, cached]
            if not c.cached:
                made += tokens
            if not c.cached or c.shared:
                needed += tokens
    cost = None
    if record.termination == "completed":
        if record.cell.knobs.next_model:
            prompt, completion, calls = _handed_agent(record)
        matcher, compiler = helpers["matcher"], helpers["compiler"]
        cost = EpisodeCost(
            prompt, completion, calls, needed, matcher[0], matcher[1], compiler[0], compiler[1]
        )
    return EpisodeFacts(
        len(record.turns), agent, made, record.wall_s, len(record.corruptions), cost
    )


def facts_cell_cost(episodes: Sequence[tuple[EpisodeCost, float]]) -> CellCost:
    """:func:`scoring.display.run_overview.cell_cost` of a cell's completed episodes, each
    as its cost and its wall time."""
    if not episodes:
        return CellCost(n=0)
    costs = [c for c, _ in episodes]
    # each mean over a list (fmean of a generator counts it through a generator of its own;
    # the same sum and count, the same mean: #50)
    return CellCost(
        n=len(costs),
        prompt_tokens=statistics.fmean([float(c.prompt) for c in costs]),
        completion_tokens=statistics.fmean([float(c.completion) for c in costs]),
        total_tokens=statistics.fmean([float(c.prompt + c.completion) for c in costs]),
        helper_tokens=statistics.fmean([float(c.helper_tokens) for c in costs]),
        agent_calls=statistics.fmean([float(c.agent_calls) for c in costs]),
        helper_calls=statistics.fmean(
            [
                float(c.matcher_made + c.matcher_cached)
                + float(c.compiler_made + c.compiler_cached)
                for c in costs
            ]
        ),
        helper_calls_cached=statistics.fmean(
            [float(c.matcher_cached) + float(c.compiler_cached) for c in costs]
        ),
        episode_latency_median_s=statistics.median([wall for _, wall in episodes]),
    )
