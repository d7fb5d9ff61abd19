"""``ladder domain check FILE --model M [--base-url URL]``: a served model reads the pack's
wordings back (issue #46; runner.paraphrase.reader, protocol.domains.readback). Every wording
the model reads otherwise than the pack labels it is one line; ``--base-url embedded`` runs the
scripted endpoint in-process (its reader is a test instrument, serve/agents/pack_reader.py)."""

from __future__ import annotations

import asyncio
import os
from contextlib import AsyncExitStack
from pathlib import Path

import typer

from ladder.errors import UsageError
from ladder.flags import OPENAI_API_KEY, OPENAI_BASE_URL
from protocol.domains.readback import Disagreement
from protocol.domains.shape import DomainPool
from runner.client.endpoint import Endpoint
from runner.execution.connect import ping
from runner.grid.schema import EMBEDDED, Decoding, ModelConfig, redact_url, url_problem
from runner.paraphrase.reader import read_all

__all__ = ["read_back"]

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"  # vLLM's default address (OURS)


class _Unanswered(Exception):
    """The endpoint failed its preflight (the message is one line)."""


async def _read(
    base_url: str, api_key: str | None, model: ModelConfig, pool: DomainPool
) -> tuple[int, list[Disagreement]]:
    from serve.endpoint.app import start_server, stop_server

    decoding = Decoding(temperature=0.0)
    async with AsyncExitStack() as stack:
        url = base_url
        if base_url == EMBEDDED:
            server, url = await start_server()
            stack.push_async_callback(stop_server, server)
        endpoint = Endpoint(
            [url],
            api_key=api_key,
            max_in_flight=16,
            timeout_s=decoding.timeout_s,
            attempts=decoding.attempts,
            name="reader",
        )
        await stack.enter_async_context(endpoint)
        if (problem := await ping(endpoint, model)) is not None:
            raise _Unanswered(problem)
        return await read_all(endpoint, model, decoding, pool)


def _endpoint(base_url: str | None, api_key_env: str | None) -> tuple[str, str | None]:
    """The base URL and the API key, as ``ladder paraphrase`` reads them."""
    if base_url is None and os.environ.get(OPENAI_BASE_URL):
        base_url = os.environ[OPENAI_BASE_URL]
    base_url = base_url or DEFAULT_BASE_URL
    if (problem := url_problem(base_url)) is not None:
        raise UsageError(problem)
    if api_key_env is None and base_url != EMBEDDED and os.environ.get(OPENAI_API_KEY):
        api_key_env = OPENAI_API_KEY
    api_key = os.environ.get(api_key_env) if api_key_env else None
    if api_key_env and not api_key:
        raise UsageError(f"environment variable {api_key_env} (the API key) is not set")
    return base_url, api_key


def read_back(
    pool: DomainPool, file: Path, model: str, base_url: str | None, api_key_env: str | None
) -> int:
    """Print each wording model M reads otherwise than the pack labels it; their count."""
    url, api_key = _endpoint(base_url, api_key_env)
    shown = "the embedded scripted endpoint" if url == EMBEDDED else redact_url(url)
    typer.echo(f"reading {file}'s wordings with {model} on {shown}")
    try:
        n, found = asyncio.run(_read(url, api_key, ModelConfig(name=model), pool))
    except _Unanswered as e:
        raise UsageError(f"the reader's endpoint did not answer: {e}") from None
    for d in found:
        typer.echo(f"{file}: {d.item.where}: {d.said}: {d.item.text!r}")
    typer.echo(f"{file}: {model} read {n} wordings; {len(found)} disagree with the pack's labels")
    return len(found)
