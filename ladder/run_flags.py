"""The named flags of ``ladder run``, declared once (issue #35): :class:`RunFlags`, one field
per flag with its :class:`FlagSpec` (help, spelling, the grid field it sets, how its text is
read, its default in a grid built from the flags alone). :mod:`ladder.flags` turns them into
typer options and applies them to a grid."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import orjson

from protocol.registry import unknown_choice
from runner.grid.ceilings import CEILINGS
from runner.grid.schema import DEFAULT_MAX_IN_FLIGHT
from runner.grid.seeds import MAX_SEEDS

__all__ = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "FlagError",
    "FlagSpec",
    "RunFlags",
    "flag_name",
    "flag_specs",
    "parse_items",
]

OPENAI_BASE_URL = "OPENAI_BASE_URL"
OPENAI_API_KEY = "OPENAI_API_KEY"
REGIMES = ("no-think", "thinking")
SELECTS = ("request", "checkpoint", "vendor")


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
    return parse_items(flag, str(value))


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
    given = parse_items("--domain", flags.domain) if flags.domain is not None else []
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


def parse_items(flag: str, text: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise FlagError(f"{flag}: empty list")
    return items


def _numbers(flag: str, text: str, kind: type[int] | type[float]) -> list[int | float]:
    out: list[int | float] = []
    for item in parse_items(flag, text):
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
        raise FlagError(unknown_choice(f"{flag}: unknown value {value!r}", value, choices))
    return value
