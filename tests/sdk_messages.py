"""Plain ``{"role", "content"}`` messages as the openai SDK's typed message params (the
SDK's boundary: its ``create`` takes a union of TypedDicts, one per role)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from openai.types.chat import ChatCompletionMessageParam


def sdk_messages(messages: Sequence[Mapping[str, str]]) -> list[ChatCompletionMessageParam]:
    out: list[ChatCompletionMessageParam] = []
    for m in messages:
        role, content = m["role"], m["content"]
        if role == "system":
            out.append({"role": "system", "content": content})
        elif role == "user":
            out.append({"role": "user", "content": content})
        elif role == "assistant":
            out.append({"role": "assistant", "content": content})
        else:
            raise ValueError(f"no openai message param for role {role!r}")
    return out
