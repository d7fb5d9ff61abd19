"""What goes over the wire for a chat call: the request body, and a response read into a
retry, a failure or a parsed body (the endpoint client, :mod:`runner.client.endpoint`, sends and
retries).

A reply body is read in ONE place, :func:`decode_chat` (one typed decode; :func:`read_chat`
names what is malformed), into a typed :class:`ChatReply` before anything else looks at it
(docs/security.md). Accepted shapes: ``message.content`` a string,
null, or a list of text parts (``{"type": "text", "text": ...}`` or bare strings, joined: a
real OpenAI-compatible variant); ``reasoning_content`` / ``reasoning`` a string or null;
``finish_reason`` a short string or null; ``usage`` an object or null whose token counts are
integers in ``0..10**9``. Anything else (a message that is a string, a completions-style
``text`` choice, a number as content, a ``finish_reason`` object, string counts) is a
malformed body: retried, then an infrastructure error with a one-line reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import msgspec
import orjson

from protocol.visible import one_line
from runner.client.transport import Response

__all__ = [
    "MAX_TOKEN_COUNT",
    "ChatReply",
    "ContextOverflow",
    "Fatal",
    "JsonObject",
    "Retry",
    "cached_tokens",
    "chat_body",
    "check_status",
    "decode_chat",
    "parse_body",
    "read_chat",
    "redirect_target",
    "reply_cap",
    "retry_after",
]

# A decoded JSON object: orjson's output, the library boundary (its values are whatever the
# server's JSON holds).
JsonObject = dict[str, Any]
Message = Mapping[str, str]

MAX_TOKEN_COUNT = 10**9  # a usage count above this is absurd: the body is malformed
_MAX_FINISH = 64  # characters of a finish_reason

# The byte cap of a chat reply, as sent and decompressed (runner.client.transport): a fixed
# allowance for the JSON envelope and usage, plus a generous 128 bytes per token of the reply
# budget for each of the visible reply and the reasoning. 12,000 tokens (the budget ceiling)
# allow 4 MiB; 64 requests in flight at most 256 MiB.
REPLY_BASE_BYTES = 1 << 20
REPLY_BYTES_PER_TOKEN = 128
REPLY_CAP_TOKENS = 12_000  # the budget ceiling (runner.client.endpoint.BUDGET_CEILING)

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
    """A failure retrying cannot fix (a 4xx other than 408, 409, 429, or a redirect)."""


class ChatReply(msgspec.Struct, frozen=True, kw_only=True):
    """A chat completion's body, shape-checked (:func:`read_chat`)."""

    content: str
    reasoning: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int | None  # None: the server did not report them
    model: str | None = None  # the model the server says answered (None: not said)


def reply_cap(max_tokens: int) -> int:
    """The byte cap of a reply under a budget of ``max_tokens`` (see REPLY_BASE_BYTES); a
    budget past :data:`REPLY_CAP_TOKENS` counts as that (#47): whatever ``max_tokens`` says,
    a reply holds at most ~4 MiB."""
    tokens = max_tokens  # in 0..REPLY_CAP_TOKENS, as most budgets are: no min/max (#50)
    if not 0 <= tokens <= REPLY_CAP_TOKENS:
        tokens = 0 if tokens < 0 else REPLY_CAP_TOKENS
    return REPLY_BASE_BYTES + 2 * REPLY_BYTES_PER_TOKEN * tokens


def retry_after(value: str | None, cap: float) -> float | None:
    """A Retry-After header's seconds, at most ``cap`` (None: absent or not a number of
    seconds; an HTTP date is ignored and the backoff used)."""
    if not value or not value.strip().replace(".", "", 1).isdigit():
        return None
    try:
        delay = float(value)
    except ValueError:
        return None
    return min(delay, cap) if math.isfinite(delay) else cap


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
    return _cached(usage.get("prompt_tokens_details"), usage.get("cached_tokens"))


def _cached(details: object, bare: object) -> int | None:
    """:func:`cached_tokens` of a usage's ``prompt_tokens_details`` and ``cached_tokens``."""
    value = details.get("cached_tokens") if isinstance(details, dict) else None
    if value is None:
        value = bare
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_TOKEN_COUNT:
        return value
    return 0


def _is_context_error(status: int, text: str) -> bool:
    """A prompt too long for the model, in vLLM's, SGLang's or llama.cpp's wording."""
    low = text.lower()
    return status == 400 and any(w in low for w in _CONTEXT_WORDS)


def check_status(resp: Response) -> None:
    """Raise :class:`Retry`, :class:`ContextOverflow` or :class:`Fatal` for a failed
    response; nothing for a success."""
    status = resp.status
    if status == 429:
        delay = retry_after(resp.headers.get("Retry-After"), math.inf)
        raise Retry("429 Too Many Requests", delay, throttled=True)
    if 300 <= status < 400:
        raise Fatal(f"HTTP {status}: redirect to {redirect_target(resp)} not followed")
    if status >= 500 or status in (408, 409):
        # 408 / 409 (a proxy's timeout, a conflict) are transient: retried like 5xx, as the
        # openai client does.
        raise Retry(f"HTTP {status}")
    if status >= 400:
        text = resp.body.decode(errors="replace")[:300]
        if _is_context_error(status, text):
            # the server's own words kept (its token counts: the prompt, the context), #40
            raise ContextOverflow(
                f"HTTP {status}: context length exceeded: {one_line(_error_message(text))}"
            )
        raise Fatal(f"HTTP {status}: {one_line(_error_message(text))}")


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


def redirect_target(resp: Response) -> str:
    """A redirect's Location, cut to 200 characters and shown as a literal (repr)."""
    where = resp.headers.get("Location", "")
    return repr(one_line(where, 200)) if where else "(no Location)"


def _malformed(why: str) -> Retry:
    return Retry(f"malformed response body: {why}")


def _text(value: object, what: str) -> str:
    """A string field that may be null; list-of-text-parts allowed for content only."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if what == "content" and isinstance(value, list):
        parts: list[str] = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            else:
                raise _malformed("a content part without text")
        return "".join(parts)
    raise _malformed(f"{what} is a {type(value).__name__}")


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise _malformed(f"usage.{key} is a {type(value).__name__}")
    if not 0 <= value <= MAX_TOKEN_COUNT:
        raise _malformed(f"usage.{key} out of range")
    return value


def read_chat(data: JsonObject) -> ChatReply:
    """The typed reply of a chat completion body (:func:`parse_body`'s output); :class:`Retry`
    naming what is malformed. The one place a reply's shape is checked."""
    if data.get("error") is not None:  # a 200 carrying both choices and an error (#47)
        raise _malformed("a reply carrying both choices and an error")
    choice = data["choices"][0]
    message = choice.get("message")
    if not isinstance(message, dict):
        got = "a completions-style 'text' choice" if "text" in choice else "no message object"
        raise _malformed(got)
    finish = choice.get("finish_reason")
    if finish is not None and (not isinstance(finish, str) or len(finish) > _MAX_FINISH):
        raise _malformed("finish_reason is not a short string")
    usage = data.get("usage")
    if usage is None:
        usage = {}
    if not isinstance(usage, dict):
        raise _malformed(f"usage is a {type(usage).__name__}")
    reasoning = message.get("reasoning_content")
    if reasoning is None:
        reasoning = message.get("reasoning")
    return ChatReply(
        content=_text(message.get("content"), "content"),
        reasoning=_text(reasoning, "reasoning_content"),
        finish_reason=finish,
        prompt_tokens=_count(usage, "prompt_tokens"),
        completion_tokens=_count(usage, "completion_tokens"),
        cached_tokens=cached_tokens(usage),
        model=_model(data.get("model")),
    )


# The accepted shapes of a chat completion body as msgspec types: one typed decode (in C)
# both parses and checks a well-formed reply (:func:`decode_chat`). Fields not named here
# are skipped unread.
_Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_TOKEN_COUNT)]


class _TextPart(msgspec.Struct):
    text: str


class _Message(msgspec.Struct):
    content: str | list[str | _TextPart] | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None


class _Choice(msgspec.Struct):
    message: _Message
    finish_reason: Annotated[str, msgspec.Meta(max_length=_MAX_FINISH)] | None = None


class _Usage(msgspec.Struct):
    prompt_tokens: _Count | None = None
    completion_tokens: _Count | None = None
    prompt_tokens_details: Any = None  # read leniently (_cached): a value that is no count is 0
    cached_tokens: Any = None


class _Body(msgspec.Struct):
    choices: Annotated[list[_Choice], msgspec.Meta(min_length=1)]
    usage: _Usage | None = None
    error: Any = None  # a 200 carrying an error too goes to read_chat, which refuses it (#47)
    model: Any = None  # read as _model reads it


_BODY = msgspec.json.Decoder(_Body)


def decode_chat(raw: bytes) -> ChatReply:
    """The typed reply of a chat completion's raw body, read once (#50): a typed decode
    parses and shape-checks it together; a body it refuses goes to :func:`parse_body` and
    :func:`read_chat`, which name what is malformed (or accept a shape the typed decode is
    stricter about, such as a later choice that is no object). A body accepted here reads as
    :func:`read_chat` reads it (tests/runner/client/test_decode_chat.py)."""
    try:
        body = _BODY.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return read_chat(parse_body(raw))
    if body.error is not None:
        return read_chat(parse_body(raw))
    choice = body.choices[0]
    message = choice.message
    content = message.content
    if isinstance(content, list):
        content = "".join(p if isinstance(p, str) else p.text for p in content)
    reasoning = message.reasoning_content
    if reasoning is None:
        reasoning = message.reasoning
    usage = body.usage or _NO_USAGE
    details, bare = usage.prompt_tokens_details, usage.cached_tokens
    said = body.model  # as _model reads it, without the call on the usual reply (#50)
    return ChatReply(
        content=content or "",
        reasoning=reasoning or "",
        finish_reason=choice.finish_reason,
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        cached_tokens=None if details is None and bare is None else _cached(details, bare),
        model=said if type(said) is str and 0 < len(said) <= 200 else None,
    )


_NO_USAGE = _Usage()


def _model(value: object) -> str | None:
    """The reply's ``model`` when it is a short string (shown in a warning, escaped)."""
    return value if isinstance(value, str) and 0 < len(value) <= 200 else None


def _error_message(text: str) -> str:
    try:
        data = orjson.loads(text)
        error = data.get("error") if isinstance(data, dict) else None
        msg = error.get("message") if isinstance(error, dict) else error
        if isinstance(msg, str):
            return msg
    except orjson.JSONDecodeError:
        pass
    return text.strip().splitlines()[0] if text.strip() else "(empty body)"
