"""Opening a grid's endpoints: remote ones by URL, the embedded scripted one in-process."""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from runner.client.endpoint import CallFailed, Endpoint
from runner.grid.expand import Grid, GridError, key_problem
from runner.grid.schema import EMBEDDED, ModelConfig, redact_url
from serve.config import ServerConfig

__all__ = [
    "PREFLIGHT_ATTEMPTS",
    "PREFLIGHT_TIMEOUT_S",
    "open_endpoints",
    "ping",
    "preflight",
    "preflight_helpers",
    "preflight_models",
    "problem_lines",
]

PREFLIGHT_TIMEOUT_S = 15.0  # per preflight attempt (OURS)
PREFLIGHT_ATTEMPTS = 3


@asynccontextmanager
async def open_endpoints(
    grid: Grid, *, server_config: ServerConfig | None = None, timeout_s: float | None = None
) -> AsyncIterator[dict[str, Endpoint]]:
    """Endpoints by name, sessions open; the embedded server runs while the block runs."""
    names = {m.endpoint for m in grid.models}
    names |= {m.helper_endpoint for m in grid.models if m.helper_endpoint is not None}
    if grid.memory.embed_endpoint is not None:  # the memory arms' embeddings server
        names.add(grid.memory.embed_endpoint)
    out: dict[str, Endpoint] = {}
    async with AsyncExitStack() as stack:
        embedded_url: str | None = None
        for name in sorted(names):
            cfg = grid.endpoint(name)
            urls = cfg.urls()
            if urls == [EMBEDDED]:
                if embedded_url is None:
                    embedded_url = await stack.enter_async_context(
                        _embedded(server_config, grid.run.concurrency)
                    )
                urls = [embedded_url]
            key = os.environ.get(cfg.api_key_env) if cfg.api_key_env else None
            if key and (why := key_problem(key)):
                raise GridError(f"endpoint {name!r}: environment variable {cfg.api_key_env} {why}")
            d = grid.decoding
            ep = Endpoint(
                urls,
                api_key=key,
                max_in_flight=cfg.max_in_flight,
                adaptive=cfg.adaptive,
                start_in_flight=cfg.start_in_flight,
                timeout_s=timeout_s or d.timeout_s,
                attempts=d.attempts,
                backoff_s=d.backoff_s,
                name=name,
                routing=cfg.routing,
                replica_slots=cfg.replica_slots,
            )
            await stack.enter_async_context(ep)
            out[name] = ep
        yield out


@asynccontextmanager
async def _embedded(config: ServerConfig | None, in_flight: int) -> AsyncIterator[str]:
    """The scripted endpoint in this event loop, on an ephemeral loopback port; its memo of
    conversations bounded by the run's episodes in flight (#47)."""
    from serve.endpoint.app import start_server, stop_server
    from serve.endpoint.conversation import bound_memo

    runner, url = await start_server(config)
    bound_memo(in_flight)
    try:
        yield url
    finally:
        await stop_server(runner)
        bound_memo(None)


async def preflight(grid: Grid, endpoints: dict[str, Endpoint]) -> list[str]:
    """One tiny request per model; one clear line per problem (empty when all answer).

    The request carries ``serve.faults.rates.PREFLIGHT_HEADER``: the embedded scripted endpoint's
    injected faults (``--fault``) shape the run, not the check that it answers."""
    return list((await preflight_models(grid, endpoints)).values())


async def preflight_models(grid: Grid, endpoints: dict[str, Endpoint]) -> dict[str, str]:
    """:func:`preflight` by model: each model that did not answer -> its one line (a run
    stops that model's cells alone, #47)."""
    problems: dict[str, str] = {}
    for m in grid.models:
        problem = await ping(endpoints[m.endpoint], m)
        if problem is not None:
            problems[m.name] = problem
    return problems


async def preflight_helpers(grid: Grid, endpoints: dict[str, Endpoint]) -> dict[str, str]:
    """The preflight of each model's own helper endpoint (``helper_endpoint``, where its
    compiler and matcher requests go): model -> its one line where it did not answer."""
    from runner.execution.preflight_stops import helper_pings

    problems: dict[str, str] = {}
    for m, name in helper_pings(grid):
        problem = await ping(endpoints[name], m)
        if problem is not None:
            problems[m.name] = problem
    return problems


async def ping(ep: Endpoint, m: ModelConfig) -> str | None:
    """The preflight of one model on its endpoint: None when it answers, else one line."""
    from serve.faults.rates import PREFLIGHT_HEADER

    # A transient 429 / 5xx / dropped connection at start-up is retried (a 4xx such as
    # an unknown model still fails at once), with the grid's backoff, never waiting
    # longer than the grid's own timeout.
    check = Endpoint(
        ep.base_urls,
        max_in_flight=1,
        timeout_s=min(PREFLIGHT_TIMEOUT_S, ep.timeout_s),
        attempts=min(PREFLIGHT_ATTEMPTS, ep.attempts),
        backoff_s=ep.backoff_s,
        backoff_max_s=min(ep.backoff_max_s, PREFLIGHT_TIMEOUT_S),  # Retry-After too
        name=ep.name,
    )
    check._headers = dict(ep._headers)  # same credentials, never printed
    check.allow_no_reply = True  # one token may well be an empty reply
    check._headers[PREFLIGHT_HEADER] = "1"  # the scripted endpoint injects no fault into it
    try:
        async with check:
            await check.chat(
                m.served_name(),
                [{"role": "user", "content": "ping"}],
                max_tokens=1,
                extra=m.request_extra(),
            )
    except CallFailed as e:
        return _failed(ep, m, str(e))
    return None


def _failed(ep: Endpoint, m: ModelConfig, why: str) -> str:
    """The preflight's line for a model that did not answer, within 80 columns where the
    URL allows (#49): ``qwen3-235b at http://127.0.0.1:8000/v1: connection error (3 tries)``."""
    where = redact_url(ep.base_urls[0])
    why = why.removeprefix(f"{ep.name}: ").replace(": ClientConnectorError", "")
    why = re.sub(r"\(after (\d+) attempts\)", r"(\1 tries)", why)
    return f"{m.name} at {where}: {why}"


def problem_lines(problem: str, width: int = 80 - len("error: ")) -> list[str]:
    """A preflight problem as the lines an ``error:`` prefix goes on, each within 80
    columns with it (a word wider than the line, a long URL, stays whole): the server's
    words can be long (a typo'd scripted policy's 404 lists the policies there are, #49)."""
    return textwrap.wrap(
        problem, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
    ) or [problem]
