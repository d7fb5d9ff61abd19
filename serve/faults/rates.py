"""Fault injection by rate.

Each chat request draws one uniform number from ``random.Random(f"fault|{seed}|{n}")``,
``n`` being its arrival number at this server (0, 1, 2, ...), and the cumulative rates in
:data:`FAULTS` order pick at most one fault. A sequential client therefore sees the same
faults on every run; a retried request is a new arrival and draws again.

* ``429``: ``Retry-After`` header, OpenAI-style ``RateLimitError`` body.
* ``500`` / ``503``: ``InternalServerError`` / ``ServiceUnavailableError`` bodies.
* ``drop``: the connection is closed without a response.
* ``hang``: the request sleeps ``hang_s`` (past any sane client timeout), then answers.
* ``malformed``: status 200 with a truncated JSON body.
* ``empty_thinking``: on a thinking request, empty content (reasoning kept, finish
  ``length``); on other requests no fault.

A request carrying the header :data:`PREFLIGHT_HEADER` (the runner's preflight: one tiny
request per model before a run) draws no fault: the faults are there to exercise the run,
and a preflight refused by them would stop every run with a high fault rate before it
starts. It still takes its arrival number, so the run's draws are those of a server that
answered the preflight.

The context-length error is not drawn: it is a 400 whenever prompt tokens plus
``max_tokens`` exceed ``max_model_len`` (vLLM's rule and wording).
"""

from __future__ import annotations

import random
from typing import Literal

from serve.config import FaultConfig

__all__ = ["FAULTS", "PREFLIGHT_HEADER", "Fault", "context_error", "draw"]

PREFLIGHT_HEADER = "X-State-Ladder-Preflight"  # OURS

Fault = Literal["429", "500", "503", "drop", "hang", "malformed", "empty_thinking"]
FAULTS: tuple[Fault, ...] = ("429", "500", "503", "drop", "hang", "malformed", "empty_thinking")


def _rates(c: FaultConfig) -> tuple[float, ...]:
    return (
        c.rate_429,
        c.rate_500,
        c.rate_503,
        c.rate_drop,
        c.rate_hang,
        c.rate_malformed,
        c.rate_empty_thinking,
    )


def draw(config: FaultConfig, seed: int, n: int) -> Fault | None:
    rates = _rates(config)
    if not any(rates):
        return None
    u = random.Random(f"fault|{seed}|{n}").random()
    edge = 0.0
    for fault, rate in zip(FAULTS, rates, strict=True):
        edge += rate
        if u < edge:
            return fault
    return None


def context_error(max_model_len: int, prompt_tokens: int, max_tokens: int | None) -> str | None:
    """vLLM's message when the request does not fit the context, else None."""
    if max_model_len <= 0:
        return None
    completion = max_tokens or 0
    total = prompt_tokens + completion
    if total <= max_model_len and prompt_tokens < max_model_len:
        return None
    return (
        f"This model's maximum context length is {max_model_len} tokens. However, you "
        f"requested {total} tokens ({prompt_tokens} in the messages, {completion} in the "
        "completion). Please reduce the length of the messages or completion."
    )
