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
import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

import msgspec
import orjson

from runner.grid.expand import Grid, GridError, parse_grid
from runner.grid.schema import DEFAULT_MAX_IN_FLIGHT, EMBEDDED, GridData, redact_url, url_problem
from runner.grid.seeds import format_seeds
from serve.config import ServerConfig
from serve.options import ScriptedFlags

__all__ = [
    "FlagError",
    "RunFlags",
    "apply_flags",
    "domain_list",
    "embedded_server",
    "grid_from_flags",
]

OPENAI_BASE_URL = "OPENAI_BASE_URL"
OPENAI_API_KEY = "OPENAI_API_KEY"
REGIMES = ("no-think", "thinking")
SELECTS = ("request", "checkpoint", "vendor")


class FlagError(ValueError):
    """A flag that cannot be read or cannot apply; the message is one line."""


@dataclass(frozen=True)
class RunFlags:
    """What the user typed; None for a flag not given."""

    model: str | None = None
    arms: str | None = None
    steps: str | None = None
    density: str | None = None
    seeds: str | None = None
    limit: int | None = None
    domain: str | None = None
    brief: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    concurrency: int | None = None
    max_in_flight: int | None = None
    served: str | None = None
    regime: str | None = None
    select: str | None = None
    extra: list[str] = field(default_factory=list)
    temperature: float | None = None  # decoding (#40): the grid's [decoding] overridden
    top_p: float | None = None
    max_tokens: int | None = None  # the agent's reply budget, every regime
    trials: int | None = None  # --trials K (#40): each seed run K times
    # --set TABLE.KEY=VALUE: any grid field, a TOML value (applied after the named flags)
    sets: list[str] = field(default_factory=list)

    def given(self) -> dict[str, object]:
        """``--flag`` -> value of every flag given (the overrides to print and record)."""
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None and value != []:
                flag = "set" if f.name == "sets" else f.name.replace("_", "-")
                out["--" + flag] = value
        return out


def domain_list(domain: str | None, files: list[Path]) -> str | None:
    """--domain and --domain-file as one --domain list (pack files named by their path)."""
    if not files:
        return domain
    return ",".join([*([domain] if domain else []), *(str(f) for f in files)])


def _items(flag: str, text: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise FlagError(f"{flag}: empty list")
    return items


def _or(given: str | None, default: str) -> str:
    """The flag's text if given (an empty one is refused where it is read), else the
    default: ``--arms ''`` is an empty list, never the default arms."""
    return default if given is None else given


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


def _model_fields(flags: RunFlags) -> dict[str, object]:
    out: dict[str, object] = {}
    if flags.regime is not None:
        out["regime"] = _choice("--regime", flags.regime, REGIMES)
    if flags.select is not None:
        out["select"] = _choice("--select", flags.select, SELECTS)
    if flags.extra:
        out["extra"] = _extra(flags.extra)
    return out


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
    model: GridData = {"name": _or(flags.model, "scripted/perfect"), "endpoint": "cli"}
    if flags.served is not None:
        model["served"] = flags.served
    model.update(_model_fields(flags))
    if flags.seeds is not None and not flags.seeds.strip():
        raise FlagError("--seeds: empty (e.g. --seeds 100-131)")
    seeds = _or(flags.seeds, "100-131")
    data: GridData = {
        "run": {
            "seeds": seeds,
            "steps": _numbers("--steps", _or(flags.steps, "10"), int),
            "density": _numbers("--density", _or(flags.density, "0.15"), float),
            "domains": _items("--domain", _or(flags.domain, "procurement")),
            "briefs": _items("--brief", _or(flags.brief, "amended")),
            "arms": _items("--arms", _or(flags.arms, "raw,checklist")),
            "concurrency": flags.concurrency if flags.concurrency is not None else 256,
            **({"trials": flags.trials} if flags.trials is not None else {}),
        },
        "endpoints": [endpoint],
        "models": [model],
    }
    _decoding(data, flags)
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
    if flags.seeds is not None:
        run["seeds"] = flags.seeds
    if flags.arms is not None:
        arms = _items("--arms", flags.arms)
        run["arms"] = arms
        run["variants"] = [v for v in run.get("variants", []) if v["arm"] in arms]
    if flags.steps is not None or flags.density is not None:
        graphs = grid.graphs()
        steps = sorted({s for s, _ in graphs}) if flags.steps is None else None
        dens = sorted({d for _, d in graphs}) if flags.density is None else None
        run["steps"] = steps or _numbers("--steps", flags.steps or "", int)
        run["density"] = dens or _numbers("--density", flags.density or "", float)
        run["graphs"] = []
    if flags.domain is not None:
        run["domains"] = _items("--domain", flags.domain)
    if flags.brief is not None:
        run["briefs"] = _items("--brief", flags.brief)
    if flags.concurrency is not None:
        run["concurrency"] = flags.concurrency
    if flags.trials is not None:
        run["trials"] = flags.trials
    data["models"] = _models(data["models"], flags)
    data["endpoints"] = _endpoints(data, flags)
    _decoding(data, flags)
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
            value: object = tomllib.loads(f"v = {text}")["v"]
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


def _decoding(data: GridData, flags: RunFlags) -> None:
    """--temperature, --top-p and --max-tokens into the grid's [decoding] (#40)."""
    decoding: GridData = data.setdefault("decoding", {})
    if flags.temperature is not None:
        decoding["temperature"] = flags.temperature
    if flags.top_p is not None:
        decoding["top_p"] = flags.top_p
    if flags.max_tokens is not None:
        if flags.max_tokens < 1:
            raise FlagError(f"--max-tokens must be at least 1 (got {flags.max_tokens})")
        decoding["reply_budget"] = {"no-think": flags.max_tokens, "thinking": flags.max_tokens}


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
    if flags.served is not None:
        if len(models) != 1:
            raise FlagError(
                f"--served names one model's served name but the grid runs {len(models)} "
                "models; pick one with --model"
            )
        models[0]["served"] = flags.served
    changes = _model_fields(flags)
    return [{**m, **changes} for m in models]


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
