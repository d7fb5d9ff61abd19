"""The flags of ``ladder run``: a one-configuration grid, or overrides of a grid file.

Without a grid file the flags build the grid (defaults below). With one, every flag given
overrides the file (``--seeds``, ``--arms``, ``--limit N`` = the first N seeds, graphs,
domains, briefs, models and endpoints); the overrides are returned so the run prints them
and records them in the manifest. A flag that cannot apply is refused with one line
(:class:`FlagError`), never silently ignored. The flags are declared in
:mod:`ladder.run_flags` (:class:`RunFlags`, re-exported here); this module makes them typer
options (:func:`run_options`) and applies them to a grid.

OpenAI conventions: with no ``--base-url``, ``OPENAI_BASE_URL`` names the endpoint of a
flag-built grid; with no ``--api-key-env``, ``OPENAI_API_KEY`` is its key when it is set.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import os
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_type_hints

import msgspec
import typer

from ladder.run_flags import (
    OPENAI_API_KEY,
    OPENAI_BASE_URL,
    FlagError,
    FlagSpec,
    RunFlags,
    flag_name,
    flag_specs,
    parse_items,
)
from protocol.nesting import toml_loads
from runner.grid.expand import Grid, GridError, parse_grid
from runner.grid.schema import DEFAULT_MAX_IN_FLIGHT, EMBEDDED, GridData, redact_url, url_problem
from runner.grid.seeds import format_seeds
from serve.config import ServerConfig
from serve.options import ScriptedFlags

__all__ = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "FlagError",
    "FlagSpec",
    "RunFlags",
    "apply_flags",
    "apply_sets",
    "embedded_server",
    "flag_name",
    "flag_specs",
    "grid_from_flags",
    "run_options",
]

R = TypeVar("R")


def run_options(after: str) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """A typer command with every :class:`RunFlags` flag added to its signature (after its
    parameter ``after``); it receives them as one :class:`RunFlags`, keyword ``flags``."""

    def decorate(command: Callable[..., R]) -> Callable[..., R]:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "flags"]
        cut = [p.name for p in own].index(after) + 1
        hints = get_type_hints(RunFlags)
        added = [_parameter(name, hints[name], spec) for name, spec in flag_specs().items()]

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> R:
            values = {name: kwargs.pop(name) for name in flag_specs()}
            listed = {n: v or [] for n, v in values.items() if _listed(hints[n])}
            return command(*args, flags=RunFlags(**{**values, **listed}), **kwargs)

        params = [*own[:cut], *added, *own[cut:]]
        wrapper.__dict__["__signature__"] = signature.replace(parameters=params)
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        return wrapper

    return decorate


def _listed(kind: object) -> bool:
    return kind in (list[str], list[Path])


def _parameter(name: str, kind: Any, spec: FlagSpec) -> inspect.Parameter:
    """The typer option of one flag (its type, a library boundary, as typer reads it)."""
    spelling = [flag_name(name), *([spec.short] if spec.short else [])]
    option = typer.Option(*spelling, help=spec.help_text(), show_default=False, max=spec.ceiling)
    annotation = kind | None if _listed(kind) else kind
    return inspect.Parameter(
        name,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        default=None,
        annotation=Annotated[annotation, option],
    )


def _check_url(flag: str, url: str) -> None:
    problem = url_problem(url)
    if problem:
        raise FlagError(f"{flag}: {problem}")


def _limit(flags: RunFlags, seeds: list[int]) -> str | None:
    if flags.limit is None:
        return None
    if flags.limit < 1:
        raise FlagError(f"--limit must be at least 1 (got {flags.limit})")
    return format_seeds(seeds[: flags.limit])


def _targets(data: GridData, flags: RunFlags, *, built: bool) -> None:
    """Every flag with a grid target into ``data``: the value given, else (``built``: a grid
    of the flags alone) the flag's default. ``models.*.KEY`` sets every model's KEY."""
    for name, spec in flag_specs().items():
        value = getattr(flags, name)
        if (value is None or value == []) and built and spec.built is not None:
            value = spec.built
        if spec.target is None or value is None or value == []:
            continue
        grid_value = spec.read(flag_name(name), value, flags) if spec.read else value
        table, key = spec.target.rsplit(".", 1)
        if table == "models.*":
            data["models"] = [{**m, key: grid_value} for m in data["models"]]
        else:
            data.setdefault(table, {})[key] = grid_value


def grid_from_flags(flags: RunFlags, env: dict[str, str] | None = None) -> tuple[Grid, list[str]]:
    """The one-configuration grid of the flags; (grid, notes to print)."""
    env = dict(os.environ) if env is None else env
    notes: list[str] = []
    base_url = flags.base_url
    if base_url is None and env.get(OPENAI_BASE_URL):
        base_url = env[OPENAI_BASE_URL]
        notes.append(f"endpoint {redact_url(base_url)} (from {OPENAI_BASE_URL})")
    base_url = base_url or EMBEDDED
    _check_url("--base-url" if flags.base_url else OPENAI_BASE_URL, base_url)
    endpoint: GridData = {
        "name": "cli",
        "base_url": base_url,
        "max_in_flight": DEFAULT_MAX_IN_FLIGHT
        if flags.max_in_flight is None
        else flags.max_in_flight,
    }
    key_env = flags.api_key_env
    if key_env is None and base_url != EMBEDDED and env.get(OPENAI_API_KEY):
        key_env = OPENAI_API_KEY
        notes.append(f"API key from {OPENAI_API_KEY}")
    if key_env:
        endpoint["api_key_env"] = key_env
    if flags.model is not None and not flags.model.strip():
        raise FlagError("--model: empty (e.g. --model scripted/perfect)")
    model = flags.model if flags.model is not None else flag_specs()["model"].built
    data: GridData = {
        "run": {},
        "endpoints": [endpoint],
        "models": [{"name": model, "endpoint": "cli"}],
    }
    _targets(data, flags, built=True)
    apply_sets(data, flags.sets)
    grid = parse_grid(data, source="command line")
    limited = _limit(flags, grid.seeds())
    if limited is not None:
        grid = _with_seeds(grid, limited)
    return grid, notes


def _with_seeds(grid: Grid, seeds: str) -> Grid:
    return msgspec.structs.replace(grid, run=msgspec.structs.replace(grid.run, seeds=seeds))


def apply_flags(grid: Grid, flags: RunFlags, *, source: str) -> tuple[Grid, dict[str, object]]:
    """``grid`` with every flag given applied; (new grid, the overrides)."""
    given = flags.given()
    if not given:
        return grid, {}
    if flags.base_url is not None:
        _check_url("--base-url", flags.base_url)
    data = msgspec.to_builtins(grid)
    run = data["run"]
    if flags.steps is not None or flags.density is not None:
        # graphs named one by one become the sizes x densities they span; a flag replaces one
        run["steps"] = sorted({s for s, _ in grid.graphs()})
        run["density"] = sorted({d for _, d in grid.graphs()})
        run["graphs"] = []
    data["models"] = _models(data["models"], flags)
    data["endpoints"] = _endpoints(data, flags)
    _targets(data, flags, built=False)
    if flags.arms is not None:
        run["variants"] = [v for v in run.get("variants", []) if v["arm"] in run["arms"]]
    apply_sets(data, flags.sets)
    try:
        new = parse_grid(data, source=f"{source} with the command line's flags")
    except GridError as e:
        raise FlagError(str(e)) from None
    limited = _limit(flags, new.seeds())
    if limited is not None:
        new = _with_seeds(new, limited)
    return new, given


def apply_sets(data: GridData, sets: list[str]) -> None:
    """Each ``--set PATH=VALUE`` into the grid's data: PATH names a table and its key
    (``run.seeds``, ``decoding.temperature``; an array of tables by index: ``models.0.served``)
    and VALUE is a TOML value (a bare word is a string). The grid check then reads the result
    as it reads a file, so a wrong key or value is the same one line."""
    for item in sets:
        path, sep, text = item.partition("=")
        keys = [k.strip() for k in path.split(".")]
        if not sep or len(keys) < 2 or not all(keys):
            raise FlagError(f"--set {item!r}: expected TABLE.KEY=VALUE (e.g. run.seeds=100-103)")
        try:
            value: object = toml_loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            value = text.strip()  # a bare word: a string
        node: object = data
        for i, key in enumerate(keys[:-1]):
            node = _step_into(node, key, keys[: i + 1], item)
        if not isinstance(node, dict):
            raise FlagError(f"--set {item!r}: {'.'.join(keys[:-1])} is not a table")
        node[keys[-1]] = value


def _step_into(node: object, key: str, where: list[str], item: str) -> object:
    if isinstance(node, list):
        if not key.isdigit() or int(key) >= len(node):
            raise FlagError(
                f"--set {item!r}: {'.'.join(where)}: no such entry ({len(node)} listed)"
            )
        return node[int(key)]
    if not isinstance(node, dict):
        raise FlagError(f"--set {item!r}: {'.'.join(where[:-1])} is not a table")
    return node.setdefault(key, {})


def _models(models: list[GridData], flags: RunFlags) -> list[GridData]:
    if flags.model is not None:
        names = [m["name"] for m in models]
        wanted = parse_items("--model", flags.model)
        for w in wanted:
            if w not in names:
                hint = difflib.get_close_matches(w, names, n=1)
                did = f" (did you mean {hint[0]!r}?)" if hint else ""
                raise FlagError(
                    f"--model: the grid has no model {w!r}{did}; its models: {', '.join(names)}"
                )
        models = [m for m in models if m["name"] in wanted]
    if flags.served is not None and len(models) != 1:
        raise FlagError(
            f"--served names one model's served name but the grid runs {len(models)} "
            "models; pick one with --model"
        )
    return models


def _endpoints(data: GridData, flags: RunFlags) -> list[GridData]:
    used = {m.get("endpoint", EMBEDDED) for m in data["models"]}
    entries = list(data["endpoints"])
    if flags.base_url or flags.api_key_env or flags.max_in_flight:
        # a model on the implicit embedded endpoint gets an entry the flags can change
        named = {e["name"] for e in entries}
        entries += [{"name": n, "base_url": EMBEDDED} for n in sorted(used - named)]
    out = []
    for e in entries:
        if e["name"] in used:
            if flags.base_url is not None:
                e = {**e, "base_url": flags.base_url, "base_urls": []}
            if flags.api_key_env is not None:
                e = {**e, "api_key_env": flags.api_key_env}
            if flags.max_in_flight is not None:
                e = {**e, "max_in_flight": flags.max_in_flight}
                if e.get("start_in_flight") and e["start_in_flight"] > flags.max_in_flight:
                    e["start_in_flight"] = flags.max_in_flight
        out.append(e)
    return out


def embedded_server(grid: Grid, scripted: ScriptedFlags) -> ServerConfig | None:
    """The embedded endpoint's ServerConfig of the scripted endpoint's options (None when
    none is given); refused when no model runs on the embedded endpoint."""
    if not scripted.given():
        return None
    if not any(grid.endpoint(m.endpoint).urls() == [EMBEDDED] for m in grid.models):
        raise FlagError(
            "--latency / --latency-s / --fault shape the embedded endpoint, and no model "
            "of this grid runs on it"
        )
    try:
        return ServerConfig(
            seed=scripted.fault_seed,
            latency=scripted.latency_config(),
            faults=scripted.fault_config(),
        )
    except ValueError as e:
        raise FlagError(str(e)) from None
