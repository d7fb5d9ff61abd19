"""The run directory's manifest: the grid, versions, git revision, start time.

A resumed run must run the same grid; a directory holding a different grid is refused unless
the user says so explicitly (``--allow-grid-change``); a grid that only adds seeds, arms or
configurations resumes (:mod:`runner.grid.change`). Each run appends its time, pid,
command-line overrides and the embedded endpoint's latency and fault settings (``scripted``,
when given) to ``history``. The grid is recorded as it runs: with ``graphs`` given, the
``steps`` x ``density`` lists it replaces are left out. Secrets never enter the manifest: the
grid names the environment variable of an API key, never the key.

:func:`write_or_check_manifest` with ``write=False`` only checks, so a run refuses a
directory of another grid before it contacts any endpoint.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import subprocess
import textwrap
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import msgspec
import orjson

from protocol.domains.known import DIGESTS
from protocol.records import SCHEMA_VERSION
from runner.files import planted_entries, read_regular, write_atomic
from runner.grid.change import GridChange, compare_grids, episodes_part
from runner.grid.expand import Grid
from runner.rundir.errors import RunDirError

__all__ = [
    "MANIFEST",
    "ManifestCheck",
    "ManifestError",
    "grid_digest",
    "grid_record",
    "read_manifest",
    "write_or_check_manifest",
]

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 16 << 20  # a manifest is a grid and its history: far below this


class _Model(msgspec.Struct):
    name: str
    served: str | None = None


class _Run(msgspec.Struct):
    seeds: str | int = "?"
    arms: list[str] = []
    domains: list[str] = []
    briefs: list[str] = []
    graphs: list[dict[str, Any]] | None = None
    steps: list[int] = []
    density: list[float] = []


class _Grid(msgspec.Struct):
    run: _Run | None = None
    models: list[_Model] = []
    decoding: dict[str, Any] | None = None
    endpoints: list[dict[str, Any]] = []


class _Entry(msgspec.Struct):
    time: float | None = None
    overrides: dict[str, Any] | None = None
    grid_change: list[str] = []


class _Shape(msgspec.Struct):
    """The fields of a manifest that its readers use, with their types (#47): a manifest of
    valid JSON with a wrong type is one line naming the field, never a traceback."""

    schema_version: int = 1
    grid_digest: str | None = None
    generator_version: int = 1
    grid: _Grid | None = None
    versions: dict[str, str | None] = {}
    started: float | None = None
    resumed: list[float] = []
    history: list[_Entry] = []


def manifest_problem(data: object, path: Path) -> str | None:
    """One line naming the first field of ``data`` (a decoded manifest) whose type is wrong,
    or None."""
    if not isinstance(data, dict):
        return f"{path}: not a JSON object"
    try:
        msgspec.convert(data, _Shape)
    except msgspec.ValidationError as e:  # "Expected `str`, got `array` - at `$.grid...`"
        return f"{path}: {e}"
    return None


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """``run_dir/manifest.json`` as builtins for the readers of a run (the report's details,
    the viewer's header, old records' labels); {} when there is none, or it is a link or
    another planted entry, over :data:`MAX_MANIFEST_BYTES`, or not a JSON object. A field of
    a wrong type is :class:`RunDirError` naming it (one line)."""
    path = run_dir / MANIFEST
    try:
        data = orjson.loads(read_regular(path, cap=MAX_MANIFEST_BYTES, follow=False))
    except (OSError, ValueError):  # orjson.JSONDecodeError is a ValueError
        return {}
    if not isinstance(data, dict):
        return {}
    if (problem := manifest_problem(data, path)) is not None:
        raise RunDirError(problem)
    return data


class ManifestError(ValueError):
    pass


def grid_digest(grid: Grid) -> str:
    """A digest of what the episodes depend on (:func:`runner.grid.change.episodes_part`), with
    the keys a grid written before them lacks left out at their defaults, so an old run's
    digest stands."""
    data = episodes_part(msgspec.to_builtins(grid))
    data["run"].pop("generator", None)  # checked on its own (manifest "generator_version")
    for key in ("schedules", "wordings"):  # grids written before these keep their digest
        if not data["run"].get(key):
            data["run"].pop(key, None)
    if data["run"].get("trials") == 1:  # grids before --trials (#40) keep their digest
        data["run"].pop("trials", None)
    if data.get("decoding", {}).get("top_p", 0) is None:  # grids before --top-p (#40)
        data["decoding"].pop("top_p")
    for m in data.get("models", []):  # grids before a model's context (#40)
        if m.get("context", 0) is None:
            m.pop("context")
    if data["run"].get("matcher_cache") == "shared":
        data["run"].pop("matcher_cache")
    return hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def grid_record(grid: Grid) -> dict[str, Any]:
    """The grid as the manifest records it: its builtins, without the ``steps`` and
    ``density`` lists that explicit ``graphs`` replace."""
    data: dict[str, Any] = msgspec.to_builtins(grid)
    if data["run"].get("graphs"):
        data["run"].pop("steps", None)
        data["run"].pop("density", None)
    return data


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


@dataclass
class ManifestCheck:
    """What checking the manifest found."""

    resumed: bool = False  # the directory held a run of this grid (or one it extends)
    added: list[str] = field(default_factory=list)  # a compatible superset: what it adds
    changed: list[str] = field(default_factory=list)  # an allowed change: the diff


def _refusal(out: Path, change: GridChange, width: int = 80 - len("error: ")) -> ManifestError:
    """Every difference, what a user changed first (#40), one per line within ``width``
    columns (``error: `` is put before each line, #49), then the flag that allows it."""
    wrap = textwrap.TextWrapper(width, break_long_words=False, break_on_hyphens=False)
    lines = [f"{out} holds a different grid", "(only added seeds, arms or configurations resume):"]
    wrap.initial_indent, wrap.subsequent_indent = "  ", "    "
    for item in change.diff or ["its digest differs"]:
        lines += wrap.wrap(item)
    lines += ["use another --out, or --allow-grid-change to resume into it anyway"]
    return ManifestError("\n".join(lines))


def write_or_check_manifest(
    out: Path,
    grid: Grid,
    *,
    allow_change: bool = False,
    overrides: dict[str, object] | None = None,
    scripted: object = None,
    write: bool = True,
) -> ManifestCheck:
    """Create ``out/manifest.json`` or check it against ``grid``.

    The same grid resumes; a strict superset resumes and the manifest takes the new grid;
    any other change raises :class:`ManifestError` with the diff, unless ``allow_change``
    (the manifest then takes the new grid too, so the next plain rerun is not refused).
    ``scripted``: the embedded endpoint's ``ServerConfig`` when flags shaped it (recorded in
    the history entry). ``write=False``: check only, write nothing.
    """
    if planted := planted_entries(out):
        raise ManifestError(
            f"{out} holds {len(planted)} link(s) or special file(s) where the run writes or "
            f"reads ({', '.join(planted[:3])}); a run directory may hold regular files only"
        )
    path = out / MANIFEST
    digest = grid_digest(grid)
    entry: dict[str, object] = {"time": time.time(), "pid": os.getpid()}
    if overrides:
        entry["overrides"] = overrides
    if scripted is not None:
        entry["scripted"] = msgspec.to_builtins(scripted)
    if path.exists() or path.is_symlink():
        old = _read_old(path)
        check = _resume(out, old, grid, digest, entry, allow_change)
        if write:
            _atomic_write(path, old)
        return check
    if not write:
        return ManifestCheck()
    out.mkdir(parents=True, exist_ok=True)
    _atomic_write(
        path,
        {
            "schema_version": SCHEMA_VERSION,
            "grid_digest": digest,
            "generator_version": grid.run.generator,
            # each file pack's digest (issue #37): the pack the episodes were made from
            "domain_digests": _pack_digests(grid),
            "grid": grid_record(grid),
            "overrides": overrides or {},
            "versions": _versions(),
            "git_revision": _git_revision(),
            "started": entry["time"],
            "host": platform.node(),
            "pid": os.getpid(),
            "history": [entry],
        },
    )
    return ManifestCheck()


def _read_old(path: Path) -> dict[str, Any]:
    """The manifest at ``path``: a regular file only (a planted link or FIFO is refused in one
    line), of the expected shape."""
    try:
        old: dict[str, Any] = orjson.loads(read_regular(path, follow=False))
    except (OSError, ValueError) as e:  # orjson.JSONDecodeError is a ValueError
        raise ManifestError(f"{path} is unreadable ({e}); move it away to start over") from None
    if (problem := manifest_problem(old, path)) is not None:  # a wrong type (#47)
        raise ManifestError(f"{problem}; move it away to start over")
    return old


def _resume(
    out: Path,
    old: dict[str, Any],
    grid: Grid,
    digest: str,
    entry: dict[str, object],
    allow_change: bool,
) -> ManifestCheck:
    """Check ``grid`` against the manifest ``old`` of a run being resumed and update ``old``
    in place (its grid when it changed, the history entry)."""
    ran = old.get("generator_version", 1)  # manifests before versions: generator 1
    if ran != grid.run.generator and not allow_change:
        raise ManifestError(
            f"{out} was run with generator version {ran} and this grid uses "
            f"{grid.run.generator}; set [run] generator = {ran} to resume it, or use another --out"
        )
    check = ManifestCheck(resumed=True)
    if old.get("grid_digest") != digest:
        change = (
            compare_grids(old["grid"], grid)
            if isinstance(old.get("grid"), dict)
            else GridChange(compatible=False)
        )
        if not change.compatible and not allow_change:
            raise _refusal(out, change)
        check.added = change.added if change.compatible else []
        check.changed = [] if change.compatible else change.diff
        old["grid_digest"] = digest
        old["grid"] = grid_record(grid)
        entry["grid_change"] = check.added or check.changed or ["digest"]
    if digests := _pack_digests(grid):
        entry["domain_digests"] = digests
    old.setdefault("resumed", []).append(entry["time"])
    old.setdefault("history", []).append(entry)
    return check


def _pack_digests(grid: Grid) -> dict[str, str]:
    """The digest of each loaded file pack the grid runs (built-in domains have none)."""
    return {d: DIGESTS[d] for d in grid.run.domains if d in DIGESTS}


def _atomic_write(path: Path, data: dict[str, object]) -> None:
    write_atomic(path, orjson.dumps(data, option=orjson.OPT_INDENT_2))
