"""``ladder validate``: a grid file checked, then one tiny request to each endpoint and model;
with ``--estimate`` (or ``--rate``) the grid's requests and tokens per model before any call
(:mod:`runner.execution.estimate`) and a warning for an arm whose largest prompt outgrows a
model's context (the grid's ``context``, else the server's model card)."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Annotated

import orjson
import typer

from ladder.errors import UsageError, shown
from ladder.limits import MAX_RATE
from protocol.arms.table import arm_rank
from runner.grid.expand import Grid, GridError, load_grid, missing_keys, trial_warnings
from scoring.plural import plural

__all__ = ["validate"]


def _m(n: int) -> str:
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n:,}"


async def _contexts(grid: Grid) -> dict[str, int]:
    """Each model's context from its server's model card (vLLM's ``/models`` lists
    ``max_model_len``); models the card does not cover are left out."""
    from runner.client.transport import TransportError
    from runner.execution.connect import open_endpoints

    out: dict[str, int] = {}
    async with open_endpoints(grid) as endpoints:
        for m in grid.models:
            try:
                status, body = await endpoints[m.endpoint].get("/models")
                data = orjson.loads(body) if status == 200 else {}
            except (TransportError, OSError, TimeoutError, orjson.JSONDecodeError, ValueError):
                continue
            cards = data.get("data") if isinstance(data, dict) else None
            for card in cards if isinstance(cards, list) else []:
                if not isinstance(card, dict) or card.get("id") != m.served_name():
                    continue
                n = card.get("max_model_len")
                if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                    out[m.name] = n
    return out


Rates = tuple[float, float] | None  # (prefill, decode) tokens per second


def _hours(prompt: int, completion: int, rates: Rates) -> str:
    """``; N GPU hours`` at the rates: prompt tokens at the prefill rate, completion
    tokens at the decode rate (a prompt is most of the tokens and prefills far faster)."""
    if rates is None:
        return ""
    prefill, decode = rates
    hours = (prompt / prefill + completion / decode) / 3600
    at = f"{prefill:g}" if prefill == decode else f"prefill {prefill:g} and decode {decode:g}"
    return f"; at {at} tokens/s: {hours:.2f} GPU hours"


def _thinking(bound: int, budgets: dict[str, int], prompt: int, rates: Rates) -> str:
    """A thinking model's completion bound: every request at its budget."""
    used = ", ".join(f"{r} {b:,}" for r, b in budgets.items())
    return (
        f"    thinking: completion at most {_m(bound)} tokens (an upper bound: every "
        f"request at its budget, {used}; memory and embedding requests not counted)"
        f"{_hours(prompt, bound, rates)}"
    )


def _estimate(grid: Grid, rates: Rates, contexts: dict[str, int]) -> list[str]:
    """The estimate's lines, then a warning per (model, arm) whose prompt outgrows it."""
    from runner.execution.estimate import estimate_grid

    _, models = asyncio.run(estimate_grid(grid))
    lines = ["estimate (one seed per cell on the perfect agent: a lower bound):"]
    warnings = []
    for est in models:
        lines.append(
            f"  {est.model}: {plural(est.episodes, 'episode')}, {_m(est.requests)} requests, "
            f"{_m(est.prompt_tokens)} prompt and {_m(est.completion_tokens)} completion "
            f"tokens{_hours(est.prompt_tokens, est.completion_tokens, rates)}"
        )
        if est.bound is not None:
            lines.append(_thinking(est.bound, est.budgets, est.prompt_tokens, rates))
        arms = sorted(est.largest_prompt.items(), key=lambda kv: arm_rank(kv[0]))
        shown = ", ".join(f"{arm} {n:,}" for arm, n in arms)
        lines.append(f"    largest prompt per arm: {shown} tokens")
        model = grid.model(est.model)
        context = model.context or contexts.get(est.model)
        reply = grid.decoding.reply_budget.get(model.regime, 0)
        for arm, n in arms:
            if context and n + min(reply, 512) > context:
                warnings.append(
                    f"warning: model {est.model!r}: arm {arm}'s largest prompt (~{n:,} tokens "
                    f"and a reply) outgrows its context of {context:,}; those episodes will "
                    "end on context_overflow, counted as failures"
                )
    return lines + warnings


def _check_sessions(grid: Grid) -> None:
    """Import each arm's session (its row's class or ``"module:Class"`` path) and check it is
    an arm session: one line per arm that is not, exit 2."""
    from runner.arms import registry

    problems = registry.check(sorted({c.arm for c in grid.cells()}, key=arm_rank))
    for p in problems:
        typer.echo(f"error: {shown(p)}", err=True)
    if problems:
        raise typer.Exit(2)


def _rates(rate: float | None, prefill: float | None, decode: float | None) -> Rates:
    """(prefill, decode) tokens per second from the flags; None without any."""
    for flag, value in (("--rate", rate), ("--prefill-rate", prefill), ("--decode-rate", decode)):
        if value is not None and not value > 0:
            raise UsageError(f"{flag} must be positive (got {value})")
    prefill, decode = prefill or rate, decode or rate
    if prefill is None and decode is None:
        return None
    if prefill is None or decode is None:
        missing = "--prefill-rate" if prefill is None else "--decode-rate"
        raise UsageError(f"{missing} (or --rate) is needed with the other rate")
    return (prefill, decode)


def validate(
    grid_file: Annotated[Path, typer.Argument(help="A grid TOML file.")],
    offline: Annotated[bool, typer.Option(help="Check the file only; send no request.")] = False,
    estimate: Annotated[
        bool,
        typer.Option(
            "--estimate",
            help="Also estimate requests and tokens per model (one seed per cell run on the "
            "embedded perfect agent) and warn when an arm's prompt outgrows a model's context.",
        ),
    ] = False,
    rate: Annotated[
        float | None,
        typer.Option(
            "--rate",
            metavar="TOKENS/S",
            help="With the estimate (implied): GPU hours at this many tokens per second, "
            "prompt and completion alike (--prefill-rate and --decode-rate apart).",
            show_default=False,
            max=MAX_RATE,
        ),
    ] = None,
    prefill_rate: Annotated[
        float | None,
        typer.Option(
            "--prefill-rate",
            metavar="TOKENS/S",
            help="With the estimate (implied): prompt tokens per second (default --rate).",
            show_default=False,
            max=MAX_RATE,
        ),
    ] = None,
    decode_rate: Annotated[
        float | None,
        typer.Option(
            "--decode-rate",
            metavar="TOKENS/S",
            help="With the estimate (implied): completion tokens per second (default --rate).",
            show_default=False,
            max=MAX_RATE,
        ),
    ] = None,
) -> None:
    """Check a grid file, then send one tiny request to each endpoint and model. The
    estimate needs no server: with --estimate a server that does not answer is a warning."""
    rates = _rates(rate, prefill_rate, decode_rate)
    estimate = estimate or rates is not None
    try:
        grid = load_grid(grid_file, need_keys=not offline)
    except GridError as e:
        raise UsageError(str(e)) from None
    _check_sessions(grid)
    for missing in missing_keys(grid) if offline else []:  # nothing is sent: a warning
        typer.echo(shown(f"warning: {grid_file}: {missing}"), err=True)
    n_cells = len(grid.cells())
    n_episodes = n_cells * len(grid.seeds()) * grid.run.trials
    typer.echo(f"{grid_file}: {plural(n_cells, 'cell')}, {plural(n_episodes, 'episode')}")
    for warning in trial_warnings(grid):  # trials at temperature 0 (#40)
        typer.echo(textwrap.fill(shown(warning), 80, subsequent_indent="  "), err=True)
    contexts: dict[str, int] = {}
    if not offline:
        from runner.execution.connect import open_endpoints, preflight, problem_lines
        from runner.execution.live import preflight_line
        from runner.execution.served_models import check_served_models

        async def check() -> list[str]:
            async with open_endpoints(grid) as endpoints:
                typer.echo(textwrap.fill(preflight_line(endpoints), 80, subsequent_indent="  "))
                problems = await preflight(grid, endpoints)
                if problems:
                    return problems
                served, warnings = await check_served_models(grid, endpoints)  # (#49)
                for warning in warnings:
                    typer.echo(textwrap.fill(shown(warning), 80, subsequent_indent="  "), err=True)
                return served

        problems = asyncio.run(check())
        level = "warning" if estimate else "error"  # the estimate needs no server (#49)
        for p in problems:  # each line within 80 columns with its prefix (#49)
            for line in problem_lines(shown(p), 80 - len(f"{level}: ")):
                typer.echo(f"{level}: {line}", err=True)
        if problems and not estimate:
            raise typer.Exit(2)
        if problems:
            typer.echo("warning: estimating without the servers (no model card's context)")
        else:
            typer.echo("every endpoint and model answered")
        if estimate and not problems:
            contexts = asyncio.run(_contexts(grid))
    if estimate:
        for line in _estimate(grid, rates, contexts):  # 80 columns
            indent = " " * (len(line) - len(line.lstrip()) + 2)
            typer.echo("\n".join(textwrap.wrap(line, 80, subsequent_indent=indent)))
