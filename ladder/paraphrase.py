"""``ladder paraphrase --model M [--base-url URL] --out cache.json``: the held-out rewriter.

Writes the tier-2 paraphrase cache (Appendix A.5) that ``--paraphrase-tier 2`` and a grid's
``[run] paraphrase_cache`` read: every ask and redo-probe wording of the chosen domains
rewritten three times at temperature 0.7 (the paper's) by model M, each rewrite checked
(runner.paraphrase.rewriter). Rerunning with the same ``--out`` resumes. With no ``--base-url``,
``OPENAI_BASE_URL`` names the endpoint (and ``OPENAI_API_KEY`` its key), as for ``ladder
run``; connection errors name the URL. ``--base-url embedded`` runs
the scripted endpoint in-process on loopback (its rewriter is a test instrument). Exit 0 when
the cache is complete (and loads as ``load_paraphrases`` checks it), 1 when some rewrites
still fail their checks (each listed; rerun to retry them), 2 on bad input.
"""

from __future__ import annotations

import asyncio
import os
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated

import msgspec
import typer

from ladder.errors import UsageError, shown
from ladder.limits import MAX_ATTEMPTS, MAX_IN_FLIGHT, MAX_TEMPERATURE
from ladder.run_flags import OPENAI_API_KEY, OPENAI_BASE_URL
from protocol.domains.known import POOLS
from protocol.domains.packs import PackError
from protocol.episode.paraphrases import check_paraphrases, rewrite_sources
from runner.client.endpoint import Endpoint
from runner.execution.connect import ping
from runner.execution.live import preflight_line
from runner.files import JsonlAppender
from runner.grid.packs import load_pack_file
from runner.grid.paraphrase_cache import ParaphraseCacheError, read_paraphrase_file
from runner.grid.schema import EMBEDDED, Decoding, ModelConfig, redact_url, url_problem
from runner.paraphrase.rewriter import (
    Cache,
    CallLine,
    Failure,
    load_cache,
    rewrite_all,
    save_cache,
)

__all__ = ["PAPER_TEMPERATURE", "paraphrase", "run_paraphrase"]

PAPER_TEMPERATURE = 0.7  # Appendix A.5
DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"  # vLLM's default address (OURS)


class Unanswered(Exception):
    """The rewriter's endpoint failed its preflight (the message is one line)."""


async def run_paraphrase(
    base_url: str,
    api_key: str | None,
    model: ModelConfig,
    decoding: Decoding,
    domains: list[str],
    out: Path,
    attempts: int,
    max_in_flight: int,
) -> tuple[int, list[Failure]]:
    from serve.endpoint.app import start_server, stop_server

    sources = [s for d in domains for s in rewrite_sources(POOLS[d])]
    cache = load_cache(out)
    calls = out.with_name(out.name + ".calls.jsonl")
    async with AsyncExitStack() as stack:
        url = base_url
        if base_url == EMBEDDED:
            server, url = await start_server()
            stack.push_async_callback(stop_server, server)
        endpoint = Endpoint(
            [url],
            api_key=api_key,
            max_in_flight=max_in_flight,
            timeout_s=decoding.timeout_s,
            attempts=decoding.attempts,
            name="rewriter",
        )
        await stack.enter_async_context(endpoint)
        # the endpoint and a preflight first: a wrong port is one line in seconds (#40)
        typer.echo(
            f"endpoint rewriter: {url if base_url != EMBEDDED else 'the embedded scripted endpoint'}"
        )
        typer.echo(preflight_line({"rewriter": endpoint}))
        if (problem := await ping(endpoint, model)) is not None:
            raise Unanswered(problem)
        log = stack.enter_context(JsonlAppender(calls, sync=False))  # O_NOFOLLOW (#47)

        def write(line: CallLine) -> None:
            log.write(msgspec.json.encode(line) + b"\n")

        done, failures = await rewrite_all(
            endpoint,
            model,
            decoding,
            sources,
            cache,
            attempts=attempts,
            save=_Saver(out, cache, len(sources) * 3).saved,
            log=write,
        )
    return _rewrites(done), failures


def _rewrites(cache: Cache) -> int:
    return sum(len(g) for e in cache.values() for gs in e.values() for g in gs)


class _Saver:
    """Saves the cache after each rewrite, with a progress line every tenth of the total."""

    def __init__(self, out: Path, cache: Cache, total: int) -> None:
        self.out, self.total = out, total
        self.shown = _rewrites(cache) * 10 // total

    def saved(self, c: Cache) -> None:
        save_cache(self.out, c)
        n = _rewrites(c)
        if n * 10 // self.total > self.shown:  # a progress line every tenth
            self.shown = n * 10 // self.total
            typer.echo(f"rewrites {n}/{self.total}")


def paraphrase(
    model: Annotated[str, typer.Option(help="The rewriter's served model name (not the agent's).")],
    out: Annotated[Path, typer.Option(help="The cache file (JSON) to write or resume.")],
    base_url: Annotated[
        str | None,
        typer.Option(
            help="OpenAI-compatible base URL, or 'embedded' (scripted, in-process); default "
            f"$OPENAI_BASE_URL, else {DEFAULT_BASE_URL}.",
            show_default=False,
        ),
    ] = None,
    domain: Annotated[
        list[str] | None, typer.Option(help="Domain to rewrite (repeatable; default procurement).")
    ] = None,
    domain_file: Annotated[
        list[Path] | None,
        typer.Option(help="A domain pack file to rewrite (repeatable; docs/domains.md)."),
    ] = None,
    regime: Annotated[str, typer.Option(help="no-think or thinking.")] = "no-think",
    select: Annotated[
        str, typer.Option(help="How the regime is selected: checkpoint, request, vendor.")
    ] = "checkpoint",
    temperature: Annotated[
        float, typer.Option(help="Sampling temperature.", max=MAX_TEMPERATURE)
    ] = PAPER_TEMPERATURE,
    attempts: Annotated[
        int,
        typer.Option(
            min=1, help="Tries per rewrite before its failed check is reported.", max=MAX_ATTEMPTS
        ),
    ] = 3,
    max_in_flight: Annotated[
        int, typer.Option(min=1, help="Requests in flight.", max=MAX_IN_FLIGHT)
    ] = 16,
    call_attempts: Annotated[
        int,
        typer.Option(
            min=1, help="Attempts per request (transient errors; the grid's 6).", max=MAX_ATTEMPTS
        ),
    ] = 6,
    api_key_env: Annotated[
        str | None,
        typer.Option(
            help="Environment variable holding the API key (default OPENAI_API_KEY when set)."
        ),
    ] = None,
) -> None:
    """Rewrite every ask and redo-probe wording three times with a held-out model into a
    tier-2 paraphrase cache (Appendix A.5); resumable."""
    domains = _domains(domain, domain_file)
    if regime not in ("no-think", "thinking"):
        raise UsageError(f"unknown regime {regime!r}; choose no-think or thinking")
    if select not in ("checkpoint", "request", "vendor"):
        raise UsageError(f"unknown --select {select!r}; choose checkpoint, request or vendor")
    if not temperature >= 0:
        raise UsageError(f"--temperature must be at least 0 (got {temperature})")
    base_url, api_key = _endpoint(base_url, api_key_env)
    if not out.parent.is_dir():
        raise UsageError(f"the folder of --out does not exist: {out.parent}")
    config = ModelConfig(
        name=model,
        regime=regime,  # type: ignore[arg-type]
        select=select,  # type: ignore[arg-type]
    )
    decoding = Decoding(temperature=temperature, attempts=call_attempts)
    try:
        n, failures = asyncio.run(
            run_paraphrase(
                base_url, api_key, config, decoding, domains, out, attempts, max_in_flight
            )
        )
    except Unanswered as e:
        raise UsageError(f"the rewriter endpoint did not answer: {e}") from None
    except (ValueError, OSError) as e:
        raise UsageError(str(e)) from None
    _finish(out, domains, base_url, n, failures)


def _domains(domain: list[str] | None, domain_file: list[Path] | None) -> list[str]:
    """The domains to rewrite: ``--domain``s, then ``--domain-file``s (default procurement)."""
    packs: list[str] = []
    for pack_file in domain_file or []:
        try:
            packs.append(load_pack_file(pack_file).name)
        except PackError as e:
            raise UsageError("\n".join(e.problems)) from None
    domains = [*(domain or ([] if packs else ["procurement"])), *packs]
    for d in domains:
        if d not in POOLS:
            raise UsageError(f"unknown domain {d!r}; choose from {', '.join(POOLS)}")
    return domains


def _endpoint(base_url: str | None, api_key_env: str | None) -> tuple[str, str | None]:
    """The rewriter's base URL and API key, from the flags or the environment, as
    ``ladder run`` reads them (each one taken from the environment is named)."""
    if base_url is None and os.environ.get(OPENAI_BASE_URL):  # as `ladder run` reads it
        base_url = os.environ[OPENAI_BASE_URL]
        typer.echo(f"endpoint {redact_url(base_url)} (from {OPENAI_BASE_URL})")
    base_url = base_url or DEFAULT_BASE_URL
    if (problem := url_problem(base_url)) is not None:
        raise UsageError(problem)
    if api_key_env is None and base_url != EMBEDDED and os.environ.get(OPENAI_API_KEY):
        api_key_env = OPENAI_API_KEY
        typer.echo(f"API key from {OPENAI_API_KEY}")
    api_key = None
    if api_key_env:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise UsageError(f"environment variable {api_key_env} (the API key) is not set")
    return base_url, api_key


def _finish(out: Path, domains: list[str], base_url: str, n: int, failures: list[Failure]) -> None:
    """Report the rewrites made and the failed ones; a complete cache is checked once more."""
    if n == 0 and failures and all("the call failed" in f.problems[0] for f in failures):
        why = failures[0].problems[0].split(": ", 1)[1]  # nothing answered: one line
        raise UsageError(f"the rewriter endpoint {redact_url(base_url)} did not answer: {why}")
    for f in failures:
        typer.echo(shown(f"failed: {'; '.join(f.problems)}"), err=True)
    total = sum(len(rewrite_sources(POOLS[d])) for d in domains) * 3
    typer.echo(f"{out}: {n} of {total} rewrites ({len(failures)} failed; calls logged in "
               f"{out.name}.calls.jsonl)")  # fmt: skip
    if failures:
        typer.echo("rerun the same command to retry the failed rewrites", err=True)
        raise typer.Exit(1)
    try:
        data = read_paraphrase_file(out)
    except ParaphraseCacheError as e:
        raise UsageError(str(e)) from None
    problems = [p for d in domains for p in check_paraphrases(data, POOLS[d])]
    if problems:  # pragma: no cover - rewrite_all checks each rewrite as check_paraphrases does
        raise UsageError(f"{out}: {problems[0]}")
    typer.echo(f"complete: use it with --paraphrase-tier 2 --paraphrase-cache {out}")
