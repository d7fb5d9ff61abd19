"""The scripted endpoint in its own process, pinned to its own core, for the benchmarks.

``python -m bench._endpoint '<ServerConfig as JSON>' [CORE|-] [REPLICAS] [TRACE]`` starts
:func:`serve.endpoint.app.start_replicas` on uvloop, prints each base URL on one line, and serves
until stdin closes. The parent side is
:func:`endpoint_process`, a context manager that yields an :class:`EndpointProcess` (its URL
and its CPU time read from ``/proc``). With ``trace``, the child stamps each chat request
(:func:`bench._trace.trace_server`) and the parent reads the stamps after it exits.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import msgspec

__all__ = ["EndpointProcess", "endpoint_process", "server_config"]


def server_config(
    *,
    concurrency: int = 0,
    mode: str = "none",
    seconds: float = 0.0,
    prefill_s_per_token: float = 0.0,
    decode_s_per_token: float = 0.0,
    prefix_cache: dict[str, object] | None = None,
) -> dict[str, object]:
    """A ServerConfig as plain data (the child converts it)."""
    return {
        "concurrency": concurrency,
        **({"prefix_cache": prefix_cache} if prefix_cache else {}),
        "latency": {
            "mode": mode,
            "seconds": seconds,
            "prefill_s_per_token": prefill_s_per_token,
            "decode_s_per_token": decode_s_per_token,
        },
    }


@dataclass
class EndpointProcess:
    url: str
    pid: int
    urls: tuple[str, ...] = ()  # every replica's base URL (``url`` is the first)
    trace: dict[str, list[float]] | None = None  # filled when the child exits (``trace``)

    def cpu_s(self) -> float:
        """User + system CPU seconds the endpoint process has used so far."""
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def endpoint_process(
    config: dict[str, object], core: int | None = None, replicas: int = 1, trace: bool = False
) -> Iterator[EndpointProcess]:
    """The endpoint in a child process; ``replicas`` of it (one loop, a shared oracle).
    ``trace``: the child's request stamps land in ``EndpointProcess.trace`` on exit."""
    with tempfile.TemporaryDirectory(prefix="ladder-bench-endpoint-") as tmp:
        d = Path(tmp)
        args = [sys.executable, "-m", "bench._endpoint", msgspec.json.encode(config).decode()]
        args += ["-" if core is None else str(core), str(replicas)]
        args += [str(d / "trace.json")] if trace else []
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ep = EndpointProcess(url="", pid=proc.pid)
        try:
            assert proc.stdout is not None
            urls = tuple(proc.stdout.readline().strip() for _ in range(replicas))
            if not all(u.startswith("http") for u in urls):
                raise RuntimeError(f"the scripted endpoint did not start (got {urls!r})")
            ep.url, ep.urls = urls[0], urls
            yield ep
        finally:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if trace and (d / "trace.json").is_file():
                ep.trace = msgspec.json.decode((d / "trace.json").read_bytes())


async def _serve(config_json: str, replicas: int, trace: str | None) -> None:
    from serve.collector import young_collector
    from serve.config import ServerConfig
    from serve.endpoint.app import start_replicas, stop_server
    from serve.endpoint.server import SERVER

    config = msgspec.json.decode(config_json.encode(), type=ServerConfig)
    runners, urls = await start_replicas(config, replicas)
    log: dict[str, list[float]] = {}
    pauses = None
    if trace:
        from bench._trace import GcPauses, trace_server

        for runner in runners:
            trace_server(runner.app[SERVER], log)
        pauses = GcPauses().__enter__()  # the server's own collector pauses (#50)
    for url in urls:
        print(url, flush=True)
    loop = asyncio.get_running_loop()
    with young_collector():  # as `ladder serve scripted` serves (serve.collector, #50)
        await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes our stdin
    for runner in runners:
        await stop_server(runner)
    if trace and pauses is not None:
        pauses.__exit__()
        log.update(pauses.columns())
        with open(trace, "wb") as f:
            f.write(msgspec.json.encode(log))


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[2] != "-":
        from bench._common import pin

        pin(int(sys.argv[2]))
    replicas = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    trace = sys.argv[4] if len(sys.argv) > 4 else None
    try:
        import uvloop

        uvloop.run(_serve(sys.argv[1], replicas, trace))
    except ImportError:  # pragma: no cover
        asyncio.run(_serve(sys.argv[1], replicas, trace))


if __name__ == "__main__":
    main()
