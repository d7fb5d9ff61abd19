"""Response bodies shaped as the OpenAI API and vLLM serve them (orjson-encoded bytes)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import orjson

__all__ = [
    "ERROR_TYPES",
    "completion_body",
    "embeddings_body",
    "error_body",
    "models_body",
]

ERROR_TYPES = {
    400: "BadRequestError",
    404: "NotFoundError",
    429: "RateLimitError",
    500: "InternalServerError",
    503: "ServiceUnavailableError",
}


def error_body(status: int, message: str) -> bytes:
    """``{"error": {"message", "type", "param", "code"}}`` as vLLM answers errors."""
    kind = ERROR_TYPES.get(status, "APIError")
    return orjson.dumps(
        {"error": {"message": message, "type": kind, "param": None, "code": status}}
    )


def completion_body(
    *,
    request_id: str,
    created: int,
    model: str,
    content: str,
    reasoning: str | None,
    finish_reason: str,
    prompt_tokens: int,
    completion_tokens: int,
    fingerprint: str,
    cached_tokens: int | None = None,
) -> bytes:
    """A chat completion; ``cached_tokens`` (a prefix cache's hit) goes in
    ``usage.prompt_tokens_details`` as vLLM reports it (absent: ``null``, as vLLM without
    ``--enable-prompt-tokens-details``)."""
    details = None if cached_tokens is None else {"cached_tokens": cached_tokens}
    message: dict[str, object] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
        message["reasoning"] = reasoning  # vLLM's current field name
    return orjson.dumps(
        {
            "id": request_id,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": details,
            },
            "system_fingerprint": fingerprint,
        }
    )


def models_body(names: Iterable[str], created: int, max_model_len: int) -> bytes:
    data = [
        {
            "id": name,
            "object": "model",
            "created": created,
            "owned_by": "state-ladder",
            "root": name,
            "parent": None,
            "max_model_len": max_model_len or None,
        }
        for name in names
    ]
    return orjson.dumps({"object": "list", "data": data})


def embeddings_body(model: str, vectors: Sequence[list[float]], prompt_tokens: int) -> bytes:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return orjson.dumps(
        {
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
        }
    )
