"""The scripted endpoint's latency and fault options, defined once and stacked on each command
that starts one (``ladder run``, ``ladder demo``, ``ladder serve scripted``).

``@scripted_options`` adds the options below to a typer command's signature and hands the
command one :class:`ScriptedFlags` (keyword ``scripted``) in their place, the way inspect_ai's
``eval_options`` serves both ``eval`` and ``eval-set``. One spelling: a fault's rate is
``--fault-NAME RATE`` (``--fault-503 0.2``); ``--fault NAME=RATE`` (repeatable, not in the
help) is still read, as scripts written for ``ladder run`` use it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Annotated, Any, TypeVar, get_args

import typer

from serve.config import FaultConfig, LatencyConfig, LatencyMode
from serve.faults.rates import FAULTS

__all__ = [
    "MAX_CACHE_TOKENS",
    "MAX_CONTEXT",
    "MAX_IN_FLIGHT",
    "MAX_PORT",
    "MAX_REPLICAS",
    "MAX_SECONDS",
    "MAX_SEED",
    "ScriptedFlags",
    "scripted_options",
]

R = TypeVar("R")
PANEL = "Scripted endpoint: latency and faults"
LATENCIES: tuple[LatencyMode, ...] = get_args(LatencyMode)
_FAULT_HELP = {
    "429": "rate of 429 Too Many Requests answers (with Retry-After)",
    "500": "rate of HTTP 500 answers",
    "503": "rate of HTTP 503 answers",
    "drop": "rate of connections dropped with no answer",
    "hang": "rate of requests that hang --hang-s seconds, then answer",
    "malformed": "rate of answers cut mid-body (malformed JSON)",
    "empty_thinking": "rate of thinking replies with empty content",
}


@dataclass(frozen=True)
class ScriptedFlags:
    """What the user typed of the scripted endpoint's options (defaults: as the server's)."""

    latency: str | None = None  # None: fixed when --latency-s is given, else none
    latency_s: float | None = None
    sigma: float = 0.5
    prefill_s: float = 0.0
    decode_s: float = 0.0
    rates: dict[str, float] = field(default_factory=dict)  # --fault-NAME: name -> rate
    items: tuple[str, ...] = ()  # --fault NAME=RATE, as typed
    retry_after_s: float = 1.0
    hang_s: float = 600.0
    fault_seed: int = 0

    def given(self) -> bool:
        """Whether any option differs from its default."""
        return any(getattr(self, f.name) != _DEFAULT_FLAGS[f.name] for f in fields(self))

    def latency_config(self) -> LatencyConfig:
        """The latency model; ValueError (one line) for an unknown mode or a negative time."""
        mode = self.latency or ("fixed" if self.latency_s else "none")
        if mode not in LATENCIES:
            from protocol.registry import unknown_choice  # here: a refusal alone needs it

            raise ValueError(unknown_choice(f"--latency: unknown {mode!r}", mode, LATENCIES))
        for name in ("latency_s", "prefill_s", "decode_s"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 0 (got {value})")
        return LatencyConfig(
            mode=mode,
            seconds=self.latency_s or 0.0,
            sigma=self.sigma,
            prefill_s_per_token=self.prefill_s,
            decode_s_per_token=self.decode_s,
        )

    def fault_config(self) -> FaultConfig:
        """The fault rates; ValueError (one line) for a rate outside [0, 1] or a sum over 1."""
        given = {**self.rates, **_fault_items(self.items)}
        for name, rate in given.items():
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"--fault {name}: the rate must be in [0, 1] (got {rate!r})")
        rates = {f"rate_{name}": rate for name, rate in given.items()}
        faults = FaultConfig(**rates, retry_after_s=self.retry_after_s, hang_s=self.hang_s)
        if not 0.0 <= faults.total() <= 1.0 + 1e-9:
            raise ValueError("--fault: fault rates must each be >= 0 and sum to at most 1")
        return faults


_DEFAULT_FLAGS = {f.name: getattr(ScriptedFlags(), f.name) for f in fields(ScriptedFlags)}


def _fault_items(items: tuple[str, ...]) -> dict[str, float]:
    """``--fault NAME=RATE`` items -> name -> rate."""
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if name not in FAULTS:
            from protocol.registry import unknown_choice  # here: a refusal alone needs it

            raise ValueError(unknown_choice(f"--fault: unknown value {name!r}", name, FAULTS))
        try:
            out[name] = float(value) if sep else float("nan")
        except ValueError:
            raise ValueError(f"--fault {name}: {value!r} is not a number") from None
    return out


# The ceilings of the command line's numbers (#47, OURS): far above any real use, so a
# hostile or mistyped value is click's one line, never a sleep of 10^300 seconds or a
# listing of 10^20 replicas (docs/security.md)
MAX_SECONDS = 86_400.0  # a day
MAX_PER_TOKEN_S = 60.0  # seconds per prompt or completion token
MAX_SIGMA = 100.0
MAX_SEED = 2**63 - 1
MAX_PORT = 65_535
MAX_IN_FLIGHT = 65_536
MAX_CONTEXT = 100_000_000  # tokens
MAX_CACHE_TOKENS = 10**12
MAX_REPLICAS = 1_024


def _option(
    name: str,
    kind: object,
    default: object,
    help: str,
    ceiling: float | None,
    hidden: bool = False,
) -> inspect.Parameter:
    flag = f"--{name.replace('_', '-')}"
    option = typer.Option(flag, help=help, rich_help_panel=PANEL, hidden=hidden, max=ceiling)
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[kind, option]
    )


_PARAMS = [
    _option("latency", str | None, None, f"latency model: {', '.join(LATENCIES)}", None),
    _option("latency_s", float | None, None, "fixed time / lognormal median, seconds", MAX_SECONDS),
    _option("sigma", float, 0.5, "lognormal shape", MAX_SIGMA),
    _option("prefill_s", float, 0.0, "seconds per prompt token", MAX_PER_TOKEN_S),
    _option("decode_s", float, 0.0, "seconds per completion token", MAX_PER_TOKEN_S),
    *(_option(f"fault_{name}", float, 0.0, help, 1.0) for name, help in _FAULT_HELP.items()),
    _option("fault", list[str] | None, None, "NAME=RATE of a fault (repeatable)", None, True),
    _option("retry_after_s", float, 1.0, "Retry-After seconds of a 429", MAX_SECONDS),
    _option("hang_s", float, 600.0, "how long a hang lasts, seconds", MAX_SECONDS),
    _option("fault_seed", int, 0, "seed of the fault and latency draws", MAX_SEED),
]


def _flags(values: dict[str, Any]) -> ScriptedFlags:
    """The typer values (a library boundary) -> ScriptedFlags."""
    rates: dict[str, float] = {n: r for n in FAULTS if (r := values.pop(f"fault_{n}")) != 0.0}
    items = tuple(values.pop("fault") or ())
    return ScriptedFlags(rates=rates, items=items, **values)


def scripted_options(command: Callable[..., R]) -> Callable[..., R]:
    """``command`` with the scripted endpoint's options added to its signature; it receives
    them as one :class:`ScriptedFlags`, keyword ``scripted``."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "scripted"]
    names = [p.name for p in _PARAMS]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> R:
        values = {name: kwargs.pop(name) for name in names}
        return command(*args, scripted=_flags(values), **kwargs)

    params = [*own, *_PARAMS]
    wrapper.__dict__["__signature__"] = signature.replace(parameters=params)
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper
