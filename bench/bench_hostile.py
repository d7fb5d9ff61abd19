"""Peak memory under a hostile endpoint (#36, docs/security.md): 64 chat calls in flight
against a server that sends an endless body (``flood``) or a gzip bomb (64 KiB that inflate
to 64 MiB, ``gzip_bomb``), at the 12,000-token budget ceiling (a 4 MiB reply cap).

Each mode runs in a fresh child process (the server on loopback in the same process) whose
own peak RSS (``VmHWM``; not ``getrusage``'s ru_maxrss, which Linux carries across fork +
exec from the bench process, 2 GiB after the rescoring case) is the figure; the target is
under 1 GiB (before the caps: 4.6 GB in 8 s for the flood, 2.1 GB for one bomb). A baseline
child that makes the same calls against a well-formed server gives the ratio.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import subprocess
import sys
from typing import Any

from bench._common import row, status_bytes

__all__ = ["run"]

TARGET_MIB = 1024
_OK = json.dumps(
    {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}], "usage": {}}
).encode()


async def _serve(mode: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (
                int(x.split(b":")[1])
                for x in head.split(b"\r\n")
                if x.lower().startswith(b"content-length")
            ),
            0,
        )
        await reader.readexactly(length)
        if mode == "flood":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
            chunk = b'{"choices": [' + b" " * (1 << 16)
            for _ in range(16_384):  # 1 GiB at most, then close
                writer.write(chunk)
                await writer.drain()
        else:
            body = _BOMB if mode == "gzip_bomb" else _OK
            enc = b"Content-Encoding: gzip\r\n" if mode == "gzip_bomb" else b""
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + enc
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


_BOMB = b""


async def _child(mode: str, calls: int) -> int:
    from runner.client.endpoint import CallFailed, Endpoint

    global _BOMB
    if mode == "gzip_bomb":
        _BOMB = gzip.compress(b"\0" * (64 << 20), compresslevel=9)
    server = await asyncio.start_server(lambda r, w: _serve(mode, r, w), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    failed = 0
    async with Endpoint([f"http://127.0.0.1:{port}/v1"], attempts=1, max_in_flight=64) as ep:

        async def one() -> None:
            nonlocal failed
            try:
                await ep.chat("m", [{"role": "user", "content": "hi"}], max_tokens=12_000)
            except CallFailed:
                failed += 1

        await asyncio.gather(*(one() for _ in range(calls)))
    server.close()
    return failed


def _measure(mode: str, calls: int) -> tuple[float, int]:
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_hostile", mode, str(calls)],
        capture_output=True,
        text=True,
        check=True,
    )
    rss_kib, failed = done.stdout.split()
    return int(rss_kib) / 1024, int(failed)


def run(quick: bool = False) -> dict[str, Any]:
    calls = 64 if quick else 256
    base, _ = _measure("ok", calls)
    rows = [row("peak RSS, well-formed replies (MiB)", round(base, 1), "reference", None)]
    for mode in ("flood", "gzip_bomb"):
        rss, failed = _measure(mode, calls)
        rows.append(
            row(
                f"peak RSS, {mode} (MiB)",
                round(rss, 1),
                f"< {TARGET_MIB}",
                rss < TARGET_MIB and failed == calls,
                failed_calls=failed,
                x_baseline=round(rss / base, 2),
            )
        )
    return {"case": "hostile", "calls": calls, "rows": rows}


if __name__ == "__main__":
    failed = asyncio.run(_child(sys.argv[1], int(sys.argv[2])))
    print(status_bytes("VmHWM") // 1024, failed)  # KiB, this process's own peak
