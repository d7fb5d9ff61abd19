"""The scripted endpoint in its own process, pinned to its own core, for the benchmarks.

``python -m bench._endpoint '<ServerConfig as JSON>' [CORE]`` starts :func:`serve.app.start_server`
on uvloop, prints the base URL on one line, and serves until stdin closes. The parent side is
:func:`endpoint_process`, a context manager that yields an :class:`EndpointProcess` (its URL
and its CPU time read from ``/proc``).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import msgspec

__all__ = ["EndpointProcess", "endpoint_process", "server_config"]


def server_config(
    *,
    concurrency: int = 0,
    mode: str = "none",
    seconds: float = 0.0,
    prefill_s_per_token: float = 0.0,
    decode_s_per_token: float = 0.0,
) -> dict[str, object]:
    """A ServerConfig as plain data (the child converts it)."""
    return {
        "concurrency": concurrency,
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

    def cpu_s(self) -> float:
        """User + system CPU seconds the endpoint process has used so far."""
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def endpoint_process(
    config: dict[str, object], core: int | None = None
) -> Iterator[EndpointProcess]:
    args = [sys.executable, "-m", "bench._endpoint", msgspec.json.encode(config).decode()]
    if core is not None:
        args.append(str(core))
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http"):
            raise RuntimeError(f"the scripted endpoint did not start (got {url!r})")
        yield EndpointProcess(url=url, pid=proc.pid)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def _serve(config_json: str) -> None:
    from serve.app import start_server, stop_server
    from serve.config import ServerConfig

    config = msgspec.json.decode(config_json.encode(), type=ServerConfig)
    runner, url = await start_server(config)
    print(url, flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes our stdin
    await stop_server(runner)


def main() -> None:
    if len(sys.argv) > 2:
        from bench._common import pin

        pin(int(sys.argv[2]))
    try:
        import uvloop

        uvloop.run(_serve(sys.argv[1]))
    except ImportError:  # pragma: no cover
        asyncio.run(_serve(sys.argv[1]))


if __name__ == "__main__":
    main()
