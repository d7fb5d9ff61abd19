"""Reading request bodies: chat completions and embeddings, validated as vLLM would.

A chat body's messages are decoded once per conversation (#50): an episode resends its
growing transcript every turn, so the body is first decoded with each message left as raw
JSON (:class:`msgspec.Raw`: its syntax checked, no object built), the messages its
conversation's previous request sent byte for byte are taken as they were decoded then
(:data:`DECODED`, a :class:`serve.endpoint.prefix_memo.PrefixMemo` by raw message; exact:
compared in full), and only the rest are decoded. Same bytes, same decoding, and a message
decoded before passed every check then; any error decodes the whole body as before, whose
error is the reply. The message tuples taken are the very objects decoded before, so the
conversation memo's comparison (:mod:`serve.endpoint.conversation`) is an identity check each.
"""

from __future__ import annotations

import hashlib

import msgspec
import orjson

from serve.endpoint.prefix_memo import MEMO_DEFAULT, Message, PrefixMemo

__all__ = [
    "DECODED",
    "ChatRequest",
    "EmbeddingsRequest",
    "RequestError",
    "parse_chat",
    "parse_embeddings",
]


class RequestError(ValueError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class ChatRequest(msgspec.Struct, frozen=True, kw_only=True):
    model: str
    messages: tuple[tuple[str, str], ...]  # (role, content)
    max_tokens: int | None
    thinking: bool
    stream: bool = False
    include_usage: bool = False  # stream_options.include_usage: a last chunk with the usage
    seed: int | None = None  # the request's sampling seed (the probe's samples send one)

    def digest(self) -> str:
        """A hash of the messages (and the request's ``seed`` when it sends one): the seed
        of every per-request random choice. A request without a seed hashes as before."""
        data = self.messages if self.seed is None else (self.messages, self.seed)
        return hashlib.blake2b(orjson.dumps(data), digest_size=16).hexdigest()


class EmbeddingsRequest(msgspec.Struct, frozen=True, kw_only=True):
    model: str
    inputs: tuple[str, ...]
    dimensions: int | None


class _Part(msgspec.Struct):
    type: str = "text"
    text: str | None = None


class _Message(msgspec.Struct):
    role: str
    content: str | list[_Part] | None = None


class _Head(msgspec.Struct, kw_only=True):
    """A chat body's fields but its messages."""

    model: str
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    chat_template_kwargs: dict[str, object] | None = None
    stream: bool | None = None
    stream_options: dict[str, object] | None = None
    n: int | None = None
    seed: int | None = None


class _ChatBody(_Head, kw_only=True):
    messages: list[_Message]


class _RawBody(_Head, kw_only=True):
    messages: list[msgspec.Raw]


_CHAT = msgspec.json.Decoder(_ChatBody)
_RAW = msgspec.json.Decoder(_RawBody)
_MESSAGES = msgspec.json.Decoder(list[_Message])

# Decoded messages by their raw prefix, a request's but its last: as many conversations as
# the conversation memo keeps (serve.endpoint.conversation.bound_memo sets both). Keyed by
# the lengths of the prefix's first and last raw messages, not their bytes (no copy of the
# brief per lookup): the key only narrows the candidates, which are compared in full.
DECODED: PrefixMemo[msgspec.Raw, tuple[Message, ...]] = PrefixMemo(MEMO_DEFAULT, len)


def _object(body: bytes) -> dict[str, object]:
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise RequestError(400, "The request body is not valid JSON.") from None
    if not isinstance(obj, dict):
        raise RequestError(400, "The request body must be a JSON object.")
    return obj


def _model(obj: dict[str, object]) -> str:
    model = obj.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError(400, "'model' is required and must be a string.")
    return model


def _content(raw: str | list[_Part] | None) -> str:
    if raw is None or isinstance(raw, str):
        return raw or ""
    return "".join(p.text for p in raw if p.type == "text" and p.text)


def _pairs(messages: list[_Message]) -> list[Message]:
    # a list built, a plain string content taken as it is: no generator step and no call
    # per message (#50)
    return [(m.role, c if type(c := m.content) is str else _content(c)) for m in messages]


def _decode(body: bytes) -> tuple[_Head, tuple[Message, ...]]:
    """The body's fields and its messages, those its conversation sent before as decoded
    then (:data:`DECODED`); an error decodes the whole body, as before."""
    try:
        chat = _RAW.decode(body)
        raws = chat.messages
        hit = DECODED.take(raws)
        n, known = hit if hit is not None else (0, ())
        added = _pairs(_MESSAGES.decode(b"[" + b",".join(raws[n:]) + b"]"))
    except msgspec.DecodeError:
        whole = _CHAT.decode(body)  # its error is the request's
        return whole, tuple(_pairs(whole.messages))
    messages = (*known, *added)
    DECODED.keep(raws[:-1], messages[:-1])
    return chat, messages


def parse_chat(body: bytes) -> ChatRequest:
    """The chat request in ``body``; a :class:`RequestError` (400) when it is not one."""
    try:
        chat, messages = _decode(body)
    except msgspec.ValidationError as e:
        raise RequestError(400, f"Invalid request: {e}") from None
    except msgspec.DecodeError:
        raise RequestError(400, "The request body is not valid JSON.") from None
    if chat.n is not None and chat.n != 1:
        raise RequestError(
            400, f"n={chat.n} is not supported: the scripted endpoint returns one choice (n=1)."
        )
    if not messages:
        raise RequestError(400, "'messages' must be a non-empty list.")
    max_tokens = chat.max_completion_tokens or chat.max_tokens
    if max_tokens is not None and max_tokens < 1:
        raise RequestError(400, "max_tokens must be a positive integer.")
    kwargs = chat.chat_template_kwargs or {}
    return ChatRequest(
        model=chat.model,
        messages=messages,
        max_tokens=max_tokens,
        thinking=bool(kwargs.get("enable_thinking", False)),
        stream=bool(chat.stream),
        include_usage=bool((chat.stream_options or {}).get("include_usage", False)),
        seed=chat.seed,
    )


def parse_embeddings(body: bytes) -> EmbeddingsRequest:
    obj = _object(body)
    raw = obj.get("input")
    inputs = (raw,) if isinstance(raw, str) else raw
    if not isinstance(inputs, list | tuple) or not all(isinstance(x, str) for x in inputs):
        raise RequestError(400, "'input' must be a string or a list of strings.")
    dims = obj.get("dimensions")
    if dims is not None and (not isinstance(dims, int) or isinstance(dims, bool) or dims < 1):
        raise RequestError(400, "'dimensions' must be a positive integer.")
    return EmbeddingsRequest(model=_model(obj), inputs=tuple(inputs), dimensions=dims)
