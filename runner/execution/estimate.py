"""A grid's cost before any call to its servers (#40, ``ladder validate --estimate``).

One seed of every cell (the grid's first) is run on the embedded scripted endpoint with the
perfect agent: the arms shape their prompts as in the run and the endpoint counts the
tokens with its token counter. Per cell: requests, prompt and completion tokens per
episode and the largest prompt of an agent call; multiplied by the grid's seeds, per model.
A real model's replies are longer than the perfect agent's (its completion tokens and the
history that carries them are a floor), so the figures are a lower bound; the largest
prompt is the floor a model's context must hold.

A thinking model's replies are no floor at all: the perfect agent writes a few tokens where
a thinking model reasons first. For a model whose regime thinks, :attr:`ModelEstimate.bound`
is the completion tokens if every request spent its whole reply budget (the grid's
``reply_budget``, ``matcher_budget`` and ``compiler_budget`` for the regime, per role): an
upper bound, the only figure the grid itself fixes (#49).
"""

from __future__ import annotations

import io
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
from rich.console import Console

from protocol.records import EpisodeRecord
from runner.grid.expand import Grid
from runner.grid.schema import EMBEDDED
from runner.rundir.logs import read_logs

__all__ = ["CellEstimate", "ModelEstimate", "estimate_grid"]

PERFECT = "scripted/perfect"


@dataclass
class CellEstimate:
    """One cell's episode (the sample seed's), as the perfect agent ran it."""

    slug: str  # the sample's cell slug (its model is the perfect agent)
    arm: str
    requests: int  # agent and helper requests made
    prompt_tokens: int
    completion_tokens: int
    largest_prompt: int  # the largest prompt of one agent call
    by_role: dict[str, int] = field(default_factory=dict)  # requests per role


@dataclass
class ModelEstimate:
    model: str
    episodes: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    largest_prompt: dict[str, int] = field(default_factory=dict)  # arm -> tokens
    by_role: dict[str, int] = field(default_factory=dict)  # requests per role
    # completion tokens with every request at its budget (a thinking regime; else None)
    bound: int | None = None
    budgets: dict[str, int] = field(default_factory=dict)  # the budgets the bound used


def _cell(record: EpisodeRecord) -> CellEstimate:
    calls = [c for t in record.turns for c in t.calls if not c.cached]
    agent = [c.prompt_tokens for t in record.turns for c in t.calls if c.role == "agent"]
    roles: dict[str, int] = {}
    for c in calls:
        roles[c.role] = roles.get(c.role, 0) + 1
    return CellEstimate(
        by_role=roles,
        slug=record.cell.slug(),
        arm=record.cell.arm,
        requests=len(calls),
        prompt_tokens=sum(c.prompt_tokens for c in calls),
        completion_tokens=sum(c.completion_tokens for c in calls),
        largest_prompt=max(agent, default=0),
    )


def _sample(grid: Grid) -> Grid:
    """The grid's cells on one seed, one perfect model on the embedded endpoint."""
    data = msgspec.to_builtins(grid)
    data["run"]["seeds"] = str(grid.seeds()[0])
    data["run"]["trials"] = 1  # one trial sampled; the estimate counts the grid's trials
    data["endpoints"] = [{"name": "estimate", "base_url": EMBEDDED, "max_in_flight": 64}]
    data["models"] = [{"name": PERFECT, "endpoint": "estimate"}]
    data["memory"] = {}
    return msgspec.convert(data, Grid)


def _budgets(grid: Grid, regime: str) -> dict[str, int]:
    """The most completion tokens a request of each role may take in ``regime``."""
    d = grid.decoding
    return {
        "agent": d.reply_budget.get(regime, 0),
        "matcher": d.matcher_budget.get(regime, 0),
        "compiler": d.compiler_budget.get(regime, 0),
    }


async def estimate_grid(grid: Grid) -> tuple[list[CellEstimate], list[ModelEstimate]]:
    """Per sample cell and per model of ``grid``: requests, tokens, the largest prompt."""
    from runner.execution.grid_run import run_async

    sample = _sample(grid)
    with tempfile.TemporaryDirectory(prefix="ladder-estimate-") as tmp:
        out = Path(tmp) / "run"
        await run_async(sample, out, console=Console(file=io.StringIO()), live=False)
        cells = [_cell(r) for r in read_logs(out).values()]
    seeds = len(grid.seeds()) * grid.run.trials  # every trial of a seed is one episode
    models = []
    for m in grid.models:
        est = ModelEstimate(model=m.name)
        for c in cells:
            est.episodes += seeds
            est.requests += c.requests * seeds
            est.prompt_tokens += c.prompt_tokens * seeds
            est.completion_tokens += c.completion_tokens * seeds
            est.largest_prompt[c.arm] = max(est.largest_prompt.get(c.arm, 0), c.largest_prompt)
            for role, n in c.by_role.items():
                est.by_role[role] = est.by_role.get(role, 0) + n * seeds
        if m.regime == "thinking":
            est.budgets = _budgets(grid, m.regime)
            est.bound = sum(n * est.budgets.get(r, 0) for r, n in est.by_role.items())
        models.append(est)
    return cells, models
