"""The scripted OpenAI-compatible endpoint: an aiohttp application, in-process or standalone.

Routes: ``POST /v1/chat/completions`` (:mod:`serve.endpoint.chat`), ``GET /v1/models``,
``POST /v1/embeddings``, ``GET /health`` (200, empty, as vLLM), ``GET /stats`` (counters:
arrivals, completions, faults, requests in flight and the most seen at once).
Stateless: every answer is computed from the request's messages alone.
"""

from __future__ import annotations

import msgspec
import orjson
from aiohttp import web

from serve.config import ServerConfig
from serve.endpoint.bodies import embeddings_body, models_body
from serve.endpoint.chat import chat_completions, error_response
from serve.endpoint.embeddings import DEFAULT_DIM, embed
from serve.endpoint.models import BASE_MODELS, PREFIX, BadModelParams, ModelNotFound, parse_model
from serve.endpoint.parse import RequestError, parse_embeddings
from serve.endpoint.prefix_cache import PrefixCache
from serve.endpoint.server import SERVER, ServerState
from serve.endpoint.tokens import count, encoding

__all__ = ["build_app", "start_replicas", "start_server", "stop_server"]


async def _models(request: web.Request) -> web.Response:
    server = request.app[SERVER]
    names = [PREFIX + p for p in BASE_MODELS]
    body = models_body(names, server.created, server.config.max_model_len)
    return web.Response(body=body, content_type="application/json")


async def _health(request: web.Request) -> web.Response:
    return web.Response(status=200)


async def _stats(request: web.Request) -> web.Response:
    body = orjson.dumps(request.app[SERVER].stats())
    return web.Response(body=body, content_type="application/json")


async def _embeddings(request: web.Request) -> web.Response:
    try:
        req = parse_embeddings(await request.read())
        parse_model(req.model)
    except RequestError as e:
        return error_response(e.status, e.message)
    except ModelNotFound as e:
        return error_response(404, str(e))
    except BadModelParams as e:
        return error_response(400, str(e))
    dim = req.dimensions or DEFAULT_DIM
    vectors = [embed(text, dim) for text in req.inputs]
    tokens = sum(count(text) for text in req.inputs)
    return web.Response(
        body=embeddings_body(req.model, vectors, tokens), content_type="application/json"
    )


def build_app(
    config: ServerConfig | None = None, oracle: PrefixCache | None = None
) -> web.Application:
    encoding()  # load the tokenizer once, before the first request
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app[SERVER] = ServerState(config or ServerConfig(), oracle)
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_get("/v1/models", _models)
    app.router.add_post("/v1/embeddings", _embeddings)
    app.router.add_get("/health", _health)
    app.router.add_get("/stats", _stats)
    return app


async def start_server(
    config: ServerConfig | None = None, oracle: PrefixCache | None = None
) -> tuple[web.AppRunner, str]:
    """Start the endpoint in this event loop; (runner, base URL ending in ``/v1``).

    Binds ``config.host`` (loopback by default) on ``config.port`` (0: an ephemeral port).
    """
    config = config or ServerConfig()
    runner = web.AppRunner(
        build_app(config, oracle),
        access_log=None,
        handler_cancellation=True,
        shutdown_timeout=config.shutdown_timeout_s,
    )
    await runner.setup()
    # A deep listen backlog: hundreds of connections open at once at a run's start.
    site = web.TCPSite(runner, config.host, config.port, backlog=1024)
    await site.start()
    host, port = _bound(runner, config)
    return runner, f"http://{host}:{port}/v1"


async def start_replicas(config: ServerConfig, n: int) -> tuple[list[web.AppRunner], list[str]]:
    """``n`` replicas of the endpoint in this event loop, each with its own slots, latency
    model and prefix cache, on ports ``config.port``, ``+1``, ... (all ephemeral if 0).
    With prefix caches they share one unbounded oracle cache: each reports in ``/stats``
    the prefill its requests would have cost had every replica shared one infinite cache
    (the sum over replicas is the run's minimum)."""
    if n < 1:
        raise ValueError("replicas must be at least 1")
    pc = config.prefix_cache
    oracle = PrefixCache(pc.block_size) if pc.enabled else None
    runners: list[web.AppRunner] = []
    urls: list[str] = []
    for i in range(n):
        port = config.port + i if config.port else 0
        seed = config.seed + i  # replicas draw their faults and latencies apart
        runner, url = await start_server(
            msgspec.structs.replace(config, port=port, seed=seed), oracle
        )
        runners.append(runner)
        urls.append(url)
    return runners, urls


def _bound(runner: web.AppRunner, config: ServerConfig) -> tuple[str, int]:
    port = int(runner.addresses[0][1])
    host = config.host if config.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    return (f"[{host}]" if ":" in host else host), port


async def stop_server(runner: web.AppRunner) -> None:
    await runner.cleanup()
