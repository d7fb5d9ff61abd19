"""``ladder serve``: the scripted endpoint standalone, and launch recipes for real models."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Coroutine
from typing import Annotated, Any

import typer

from serve.collector import young_collector
from serve.config import PrefixCacheConfig, ServerConfig
from serve.endpoint.app import start_replicas, stop_server
from serve.options import (
    MAX_CACHE_TOKENS,
    MAX_CONTEXT,
    MAX_IN_FLIGHT,
    MAX_PORT,
    MAX_REPLICAS,
    MAX_SECONDS,
    ScriptedFlags,
    scripted_options,
)
from serve.recipes import RECIPES, launch_command

__all__ = ["serve_app"]

serve_app = typer.Typer(
    help="Serve the scripted endpoint, or print / launch the server of a paper model.",
    no_args_is_help=True,
    add_completion=False,
)


@serve_app.command("recipes")
def recipes() -> None:
    """List the paper's models (Table 6) and how each is served."""
    for r in RECIPES.values():
        where = r.base_url or f"tp={r.tensor_parallel} max_len={r.max_model_len}"
        typer.echo(f"{r.key:22} {r.checkpoint:42} {r.regime_selection:38} {where}")


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], wait_s: float) -> bool:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(2)
    return False


@serve_app.command("vllm")
def vllm(
    model: Annotated[str, typer.Argument(help=f"one of: {', '.join(RECIPES)}")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print the command only")] = False,
    host: Annotated[str, typer.Option(help="address the server binds")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port the server listens on", max=MAX_PORT)] = 8000,
    stack: Annotated[str, typer.Option(help="vllm or sglang")] = "vllm",
    wait_s: Annotated[
        float, typer.Option(help="how long to wait for /health", max=MAX_SECONDS)
    ] = 3600.0,
) -> None:
    """Print the serve command of a paper model; without --dry-run run it and wait on /health."""
    recipe = RECIPES.get(model)
    if recipe is None:
        from protocol.registry import unknown_choice  # here: a refusal alone needs it

        raise typer.BadParameter(unknown_choice(f"unknown model {model!r}", model, list(RECIPES)))
    if stack not in ("vllm", "sglang"):
        raise typer.BadParameter(f"unknown stack {stack!r}; choose vllm or sglang")
    cmd = launch_command(recipe, stack=stack, host=host, port=port)
    if cmd is None:
        typer.echo(f"# {recipe.paper_name} is a vendor API at {recipe.base_url}: nothing to launch")
        return
    typer.echo(shlex.join(cmd))
    if dry_run:
        return
    try:
        proc = subprocess.Popen(cmd)
    except OSError as e:  # no vllm / sglang on PATH: one line, no traceback
        pkg = "sglang" if stack == "sglang" else "vllm"
        why = e.strerror or e  # within 80 columns (#49); --help names --dry-run
        typer.echo(f"error: cannot start {cmd[0]!r} ({why}); pip install {pkg}", err=True)
        raise typer.Exit(2) from None
    if not _wait_healthy(f"http://{host}:{port}/health", proc, wait_s):
        proc.terminate()
        typer.echo(f"error: {recipe.checkpoint} did not become healthy", err=True)
        raise typer.Exit(1)
    typer.echo(f"ready: http://{host}:{port}/v1 serves {recipe.served_name}")
    raise typer.Exit(proc.wait())


async def _serve_forever(config: ServerConfig, replicas: int = 1) -> None:
    runners, urls = await start_replicas(config, replicas)
    for url in urls:  # one base URL a line: list them as the grid endpoint's base_urls
        print(url, flush=True)
    try:
        with young_collector():  # for the server's life (serve.collector, #50)
            await asyncio.Event().wait()
    finally:
        for runner in runners:
            await stop_server(runner)


@serve_app.command("scripted")
@scripted_options
def scripted(
    host: Annotated[str, typer.Option(help="bind address (loopback by default)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port; 0 picks a free one")] = 8000,
    concurrency: Annotated[
        int, typer.Option(help="requests computing at once; 0 = no cap", max=MAX_IN_FLIGHT)
    ] = 0,
    max_model_len: Annotated[
        int, typer.Option(help="context length; 0 = none", max=MAX_CONTEXT)
    ] = 0,
    replicas: Annotated[
        int,
        typer.Option(
            help="replicas on ports PORT, PORT+1, ... (each its own slots/cache)",
            max=MAX_REPLICAS,
        ),
    ] = 1,
    prefix_cache: Annotated[
        bool, typer.Option(help="emulate a prefix cache per replica (cached_tokens in usage)")
    ] = False,
    block_size: Annotated[
        int, typer.Option(help="prefix cache: tokens per KV block", max=MAX_CONTEXT)
    ] = 16,
    cache_tokens: Annotated[
        int,
        typer.Option(
            help="prefix cache: capacity in tokens per replica; 0 = unbounded",
            max=MAX_CACHE_TOKENS,
        ),
    ] = 0,
    *,
    scripted: ScriptedFlags,
) -> None:
    """Run the scripted OpenAI-compatible endpoint; prints its base URL, then serves."""
    if not 0 <= port <= 65535:
        raise typer.BadParameter(f"--port must be in 0..65535 (got {port})")
    try:
        config = ServerConfig(
            host=host,
            port=port,
            concurrency=concurrency,
            max_model_len=max_model_len,
            seed=scripted.fault_seed,
            latency=scripted.latency_config(),
            faults=scripted.fault_config(),
            prefix_cache=PrefixCacheConfig(
                enabled=prefix_cache, block_size=block_size, capacity_tokens=cache_tokens
            ),
        )
        if replicas < 1:
            raise ValueError("--replicas must be at least 1")
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    try:
        _run(_serve_forever(config, replicas))
    except KeyboardInterrupt:
        sys.exit(0)
    except OSError as e:  # a busy port, an address this host does not have
        from protocol.visible import visible  # here: the error path alone needs it

        why = str(e.strerror or e).rpartition(": ")[2]  # asyncio's words less the address (#49)
        typer.echo(visible(f"error: cannot listen on {host}:{port}: {why}"), err=True)
        raise typer.Exit(2) from None


def _run(main: Coroutine[Any, Any, None]) -> None:
    """Run ``main`` on uvloop where it is installed."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency off Windows
        asyncio.run(main)
        return
    uvloop.run(main)
