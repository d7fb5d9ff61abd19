"""The run directory's manifest: the grid, versions, git revision, start time.

A resumed run must run the same grid; a directory holding a different grid is refused unless
the user says so explicitly (``--allow-grid-change``). Secrets never enter the manifest: the
grid names the environment variable of an API key, never the key.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import msgspec
import orjson

from protocol.records import SCHEMA_VERSION
from runner.grid import Grid

__all__ = ["MANIFEST", "ManifestError", "grid_digest", "write_or_check_manifest"]

MANIFEST = "manifest.json"


class ManifestError(ValueError):
    pass


def grid_digest(grid: Grid) -> str:
    """A digest of what the episodes depend on (not concurrency or endpoints' caps)."""
    data = msgspec.to_builtins(grid)
    data["run"].pop("concurrency", None)
    data["run"].pop("generator", None)  # checked on its own (manifest "generator_version")
    for key in ("schedules", "wordings"):  # grids written before these keep their digest
        if not data["run"].get(key):
            data["run"].pop(key, None)
    for e in data.get("endpoints", []):
        for k in ("max_in_flight", "adaptive", "start_in_flight", "base_url", "base_urls"):
            e.pop(k, None)
    return hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def _git_revision() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).resolve().parent,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("state-ladder", "aiohttp", "msgspec", "openai", "tiktoken"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[pkg] = metadata.version(pkg)
    return out


def write_or_check_manifest(out: Path, grid: Grid, *, allow_change: bool = False) -> bool:
    """Create ``out/manifest.json`` or check it; True when resuming an existing run."""
    path = out / MANIFEST
    digest = grid_digest(grid)
    if path.exists():
        try:
            old: dict[str, Any] = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError) as e:
            raise ManifestError(f"{path} is unreadable ({e}); move it away to start over") from None
        ran = old.get("generator_version", 1)  # manifests before versions: generator 1
        if ran != grid.run.generator and not allow_change:
            raise ManifestError(
                f"{out} was run with generator version {ran} and this grid uses "
                f"{grid.run.generator}; set [run] generator = {ran} to resume it, or use another --out"
            )
        if old.get("grid_digest") != digest and not allow_change:
            raise ManifestError(
                f"{out} holds a different grid (digest {old.get('grid_digest')} vs {digest}); "
                "use another --out, or --allow-grid-change to resume into it anyway"
            )
        old.setdefault("resumed", []).append(time.time())
        _atomic_write(path, old)
        return True
    out.mkdir(parents=True, exist_ok=True)
    _atomic_write(
        path,
        {
            "schema_version": SCHEMA_VERSION,
            "grid_digest": digest,
            "generator_version": grid.run.generator,
            "grid": msgspec.to_builtins(grid),
            "versions": _versions(),
            "git_revision": _git_revision(),
            "started": time.time(),
            "host": platform.node(),
            "pid": os.getpid(),
        },
    )
    return False


def _atomic_write(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    os.replace(tmp, path)
