"""The flags of ``ladder run``: a one-configuration grid, or overrides of a grid file.

Without a grid file the flags build the grid (defaults below). With one, every flag given
overrides the file (``--seeds``, ``--arms``, ``--limit N`` = the first N seeds, graphs,
domains, briefs, models and endpoints); the overrides are returned so the run prints them
and records them in the manifest. A flag that cannot apply is refused with one line
(:class:`FlagError`), never silently ignored.

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
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_type_hints

import msgspec
import orjson
import typer

from protocol.nesting import toml_loads
from runner.grid.ceilings import CEILINGS
from runner.grid.expand import Grid, GridError, parse_grid
from runner.grid.schema import DEFAULT_MAX_IN_FLIGHT, EMBEDDED, GridData, redact_url, url_problem
from runner.grid.seeds import MAX_SEEDS, format_seeds
from serve.config import ServerConfig
from serve.options import ScriptedFlags

__all__ = [
    "FlagError",
    "FlagSpec",
    "RunFlags",
    "apply_flags",
    "embedded_server",
    "flag_name",
    "flag_specs",
    "grid_from_flags",
    "run_options",
]

OPENAI_BASE_URL = "OPENAI_BASE_URL"
OPENAI_API_KEY = "OPENAI_API_KEY"
REGIMES = ("no-think", "thinking")
SELECTS = ("request", "checkpoint", "vendor")
R = TypeVar("R")


class FlagError(ValueError):
    """A flag that cannot be read or cannot apply; the message is one line."""


@dataclass(frozen=True)
class FlagSpec:
    """One named flag of ``ladder run``, declared once (issue #35): its help, its spelling,
    the grid field it sets and, for a grid built from the flags alone, its default. The typer
    option (:func:`run_options`), the override record (:meth:`RunFlags.given`) and the grid
    change (:func:`apply_flags`, :func:`grid_from_flags`) are all read from here."""

    help: str
    target: str | None = None  # "run.seeds", "decoding.top_p", "models.*.regime"; None: a rule
    # (flag, value, every flag) -> the grid's value
    read: Callable[[str, Any, RunFlags], object] | None = None
    built: str | None = None  # the default of a grid built from the flags alone
    short: str | None = None  # e.g. "-S"
    # a number's ceiling when no grid field checks it (#47): typer's ``max``
    ceiling: float | None = None

    def help_text(self) -> str:
        return f"{self.help} (default {self.built})." if self.built else f"{self.help}."


def _flag(help: str, **spec: Any) -> Any:
    """A :class:`RunFlags` field: None when not given, its :class:`FlagSpec` in the metadata."""
    return field(default=None, metadata={"flag": FlagSpec(help, **spec)})


def _items_of(flag: str, value: Any, flags: RunFlags) -> list[str]:
    return _items(flag, str(value))


def _ints(flag: str, value: Any, flags: RunFlags) -> list[int | float]:
    return _numbers(flag, str(value), int)


def _floats(flag: str, value: Any, flags: RunFlags) -> list[int | float]:
    return _numbers(flag, str(value), float)


def _count(flag: str, value: Any, flags: RunFlags) -> int:
    return int(value)


def _seeds(flag: str, value: Any, flags: RunFlags) -> str:
    if not str(value).strip():
        raise FlagError(f"{flag}: empty (e.g. {flag} 100-131)")
    return str(value)


def _domain_files(flag: str, value: Any, flags: RunFlags) -> list[str]:
    """--domain-file: added to --domain's domains, else the run's only domains."""
    given = _items("--domain", flags.domain) if flags.domain is not None else []
    return [*given, *(str(path) for path in value)]


def _regime(flag: str, value: Any, flags: RunFlags) -> str:
    return _choice(flag, str(value), REGIMES)


def _select(flag: str, value: Any, flags: RunFlags) -> str:
    return _choice(flag, str(value), SELECTS)


def _extra_json(flag: str, value: Any, flags: RunFlags) -> dict[str, object]:
    return _extra(list(value))


def _budget(flag: str, value: Any, flags: RunFlags) -> dict[str, int]:
    if int(value) < 1:
        raise FlagError(f"{flag} must be at least 1 (got {value})")
    return {regime: int(value) for regime in REGIMES}


@dataclass(frozen=True)
class RunFlags:
    """What the user typed of ``ladder run``'s named flags; None (or []) for a flag not given.
    Each field is declared once, with its :class:`FlagSpec`."""

    model: str | None = _flag(
        "Model; with GRID_FILE, the grid's models to run (comma-separated)",
        built="scripted/perfect",
    )
    arms: str | None = _flag(
        "Comma-separated arms", target="run.arms", read=_items_of, built="raw,checklist"
    )
    steps: str | None = _flag(
        "Graph sizes, comma-separated", target="run.steps", read=_ints, built="10", short="-S"
    )
    density: str | None = _flag(
        "Densities, comma-separated", target="run.density", read=_floats, built="0.15"
    )
    seeds: str | None = _flag(
        "Seed range, e.g. 100-131", target="run.seeds", read=_seeds, built="100-131"
    )
    limit: int | None = _flag("Run only the first N seeds", ceiling=MAX_SEEDS)
    domain: str | None = _flag(
        "procurement, release and/or pack files, comma-separated",
        target="run.domains",
        read=_items_of,
        built="procurement",
    )
    domain_file: list[Path] = field(
        default_factory=list,
        metadata={
            "flag": FlagSpec(
                "A domain pack file to run (repeatable; docs/domains.md): with --domain, added "
                "to its domains; else the run's only domains",
                target="run.domains",
                read=_domain_files,
            )
        },
    )
    brief: str | None = _flag(
        "amended and/or original", target="run.briefs", read=_items_of, built="amended"
    )
    base_url: str | None = _flag(
        "OpenAI-compatible base URL (default: $OPENAI_BASE_URL, else the embedded scripted "
        "endpoint); with GRID_FILE, replaces its models' endpoints' URLs"
    )
    api_key_env: str | None = _flag(
        "Environment variable holding the API key (default OPENAI_API_KEY)"
    )
    concurrency: int | None = _flag(
        "Episodes in flight", target="run.concurrency", read=_count, built="256"
    )
    max_in_flight: int | None = _flag(
        "Requests in flight per endpoint",
        built=str(DEFAULT_MAX_IN_FLIGHT),
        ceiling=CEILINGS["endpoints[].max_in_flight"],
    )
    served: str | None = _flag(
        "The served model name, if not the model's", target="models.*.served"
    )
    regime: str | None = _flag(
        "no-think or thinking", target="models.*.regime", read=_regime, built="no-think"
    )
    select: str | None = _flag(
        "How the regime is selected: checkpoint, request (the request body's "
        "chat_template_kwargs) or vendor",
        target="models.*.select",
        read=_select,
        built="checkpoint",
    )
    extra: list[str] = field(
        default_factory=list,
        metadata={
            "flag": FlagSpec(
                "KEY=JSON merged into every request body (repeatable)",
                target="models.*.extra",
                read=_extra_json,
            )
        },
    )
    temperature: float | None = _flag(
        "Sampling temperature (default: the grid's, 0)", target="decoding.temperature"
    )
    top_p: float | None = _flag(
        "Sampling top_p, sent in every request (default: not sent)", target="decoding.top_p"
    )
    max_tokens: int | None = _flag(
        "The agent's reply budget in tokens, every regime (default 400 no-think, 2500 thinking)",
        target="decoding.reply_budget",
        read=_budget,
    )
    trials: int | None = _flag(
        "Run each seed of each cell this many times at the grid's temperature, scored per trial "
        "and as pass^k (default 1; docs/trials.md)",
        target="run.trials",
        read=_count,
    )
    # --set TABLE.KEY=VALUE: any grid field, a TOML value (applied after the named flags)
    sets: list[str] = field(
        default_factory=list,
        metadata={
            "flag": FlagSpec(
                "Any grid field, TABLE.KEY=VALUE with a TOML value, e.g. --set "
                "run.seeds=100-103 --set decoding.temperature=0.7 (repeatable; applied after "
                "the named flags)"
            )
        },
    )

    def given(self) -> dict[str, object]:
        """``--flag`` -> value of every flag given (the overrides to print and record)."""
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None and value != []:
                out[flag_name(f.name)] = (
                    [str(v) for v in value] if f.name == "domain_file" else value
                )
        return out


def flag_name(name: str) -> str:
    """The spelling of a :class:`RunFlags` field: ``sets`` is ``--set``."""
    return "--set" if name == "sets" else "--" + name.replace("_", "-")


def flag_specs() -> dict[str, FlagSpec]:
    """Field name -> :class:`FlagSpec` of every named flag, in declaration order."""
    return {f.name: f.metadata["flag"] for f in fields(RunFlags)}


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


def _items(flag: str, text: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise FlagError(f"{flag}: empty list")
    return items


def _numbers(flag: str, text: str, kind: type[int] | type[float]) -> list[int | float]:
    out: list[int | float] = []
    for item in _items(flag, text):
        try:
            out.append(kind(item))
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise FlagError(f"{flag}: {item!r} is not {what}") from None
    return out


def _extra(items: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise FlagError(f"--extra: {item!r} is not KEY=JSON (e.g. reasoning_effort='\"low\"')")
        try:
            out[key.strip()] = orjson.loads(value)
        except orjson.JSONDecodeError:
            raise FlagError(f"--extra {key.strip()}: {value!r} is not JSON") from None
    return out


def _choice(flag: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        hint = difflib.get_close_matches(value, choices, n=1)
        did = f" (did you mean {hint[0]!r}?)" if hint else ""
        raise FlagError(f"{flag}: unknown value {value!r}{did}; choose from {', '.join(choices)}")
    return value


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
        wanted = _items("--model", flags.model)
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
