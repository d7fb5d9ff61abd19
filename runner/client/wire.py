"""What goes over the wire for a chat call: the request body, and a response read into a
retry, a failure or a parsed body (the endpoint client, :mod:`runner.client.endpoint`, sends and
retries)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from runner.client.transport import Response

__all__ = [
    "ContextOverflow",
    "Fatal",
    "JsonObject",
    "Retry",
    "cached_tokens",
    "chat_body",
    "check_status",
    "parse_body",
]

# A decoded JSON object: orjson's output, the library boundary (its values are whatever the
# server's JSON holds).
JsonObject = dict[str, Any]
Message = Mapping[str, str]

_CONTEXT_WORDS = ("context length", "context_length", "context window", "maximum context")


class Retry(Exception):
    """A transient failure: retried after a backoff (``delay``: the server's Retry-After)."""

    def __init__(self, message: str, delay: float | None = None, throttled: bool = False) -> None:
        super().__init__(message)
        self.delay = delay
        self.throttled = throttled


class ContextOverflow(Exception):
    """The prompt and the reply budget exceed the model's context: retried with less."""


class Fatal(Exception):
    """A failure retrying cannot fix (a 4xx other than 408, 409, 429)."""


def chat_body(
    model: str,
    messages: Sequence[Message],
    temperature: float,
    max_tokens: int,
    extra: Mapping[str, object] | None,
) -> bytes:
    """The JSON body of a chat completion: ``{"model", "messages", "temperature",
    "max_tokens", **extra}``."""
    body: dict[str, object] = {
        "model": model,
        "messages": messages,
        "temperature": temperature,
        "max_tokens": max_tokens,
    }
    if extra:
        body.update(extra)
    return orjson.dumps(body)


def cached_tokens(usage: Mapping[str, Any]) -> int | None:
    """Prompt tokens the server's prefix cache served, as vLLM (``--enable-prompt-tokens-
    details``), SGLang (``--enable-cache-report``) and OpenAI report them:
    ``usage.prompt_tokens_details.cached_tokens``; a bare ``usage.cached_tokens`` is read
    too. None where the server says nothing (not reported, which is not 0: llama.cpp reuses
    most of a prompt and reports none of it, #41); a value that is no count reads as 0."""
    details = usage.get("prompt_tokens_details")
    value = details.get("cached_tokens") if isinstance(details, dict) else None
    if value is None:
        value = usage.get("cached_tokens")
    if value is None:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _is_context_error(status: int, text: str) -> bool:
    """A prompt too long for the model, in vLLM's, SGLang's or llama.cpp's wording."""
    low = text.lower()
    return status == 400 and any(w in low for w in _CONTEXT_WORDS)


def check_status(resp: Response) -> None:
    """Raise :class:`Retry`, :class:`ContextOverflow` or :class:`Fatal` for a failed
    response; nothing for a success."""
    status = resp.status
    if status == 429:
        after = resp.headers.get("Retry-After")
        delay = float(after) if after and after.replace(".", "", 1).isdigit() else None
        raise Retry("429 Too Many Requests", delay, throttled=True)
    if status >= 500 or status in (408, 409):
        # 408 / 409 (a proxy's timeout, a conflict) are transient: retried like 5xx, as the
        # openai client does.
        raise Retry(f"HTTP {status}")
    if status >= 400:
        text = resp.body.decode(errors="replace")[:300]
        if _is_context_error(status, text):
            # the server's own words kept (its token counts: the prompt, the context), #40
            raise ContextOverflow(f"HTTP {status}: context length exceeded: {_error_message(text)}")
        raise Fatal(f"HTTP {status}: {_error_message(text)}")


def parse_body(raw: bytes) -> JsonObject:
    """A chat completion's body; :class:`Retry` when it is malformed (a choice that is not an
    object included: it must not crash the run)."""
    try:
        data = orjson.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ValueError("no choices")
    except (orjson.JSONDecodeError, ValueError):
        raise Retry("malformed response body") from None
    return data


def _error_message(text: str) -> str:
    try:
        data = orjson.loads(text)
        msg = data.get("error", {}).get("message") if isinstance(data, dict) else None
        if isinstance(msg, str):
            return msg
    except orjson.JSONDecodeError:
        pass
    return text.strip().splitlines()[0] if text.strip() else "(empty body)"
