"""Did the brief reach the model? (issue #41)

A chat template without a system role (llama-cpp-python's ``--chat_format gemma``, a base
model's bare template) drops the system message without a word: the server reports the
same prompt tokens with or without the brief, the preflight passes, and the run proceeds
with an agent that never saw the plan. So the first agent call of each model is checked:
the prompt tokens the server reports must cover the brief.

The test (ours): the brief of ``n`` characters costs at least ``n / 8`` tokens in any
tokenizer an OpenAI-compatible server uses (English prose runs at about four characters a
token in cl100k, SmolLM2's and Gemma 3's vocabularies; the brief's ids and completion codes
cost more, never less), so a reply whose reported ``prompt_tokens`` falls below that lost
the brief. A server that reports no prompt tokens (0) cannot be checked and is not stopped.

:func:`placed` moves the brief into the first user turn for a model whose grid entry says
``brief_role = "user"``: the fix for a template without a system role.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["CHARS_PER_TOKEN_BOUND", "BriefLost", "brief_lost", "brief_text", "placed"]

CHARS_PER_TOKEN_BOUND = 8  # OURS: no tokenizer in use spends fewer tokens on the brief


class BriefLost(Exception):
    """The server's prompt tokens do not cover the brief; the message is one line."""


def brief_text(messages: Sequence[Mapping[str, str]]) -> str:
    """The brief a request carries: its system message (or the first user turn's, when the
    brief was moved there) as sent."""
    return next((m["content"] for m in messages if m.get("role") == "system"), "")


def brief_lost(
    model: str, messages: Sequence[Mapping[str, str]], prompt_tokens: int, brief: str
) -> str | None:
    """The one line that stops a run whose server dropped the brief, or None when the
    reported ``prompt_tokens`` cover it (or the server reports none)."""
    floor = len(brief) // CHARS_PER_TOKEN_BOUND
    if prompt_tokens <= 0 or not brief or prompt_tokens >= floor:
        return None
    where = "system message" if any(m.get("role") == "system" for m in messages) else "brief"
    return (
        f"model {model!r}: the server reported {prompt_tokens} prompt tokens for the first "
        f"agent request, whose {where} alone is {len(brief):,} characters (at least {floor} "
        "tokens): the brief did not reach the model (a chat template without a system role "
        "drops it). Serve the model with a template that has a system role, or set "
        'brief_role = "user" on the model in the grid to send the brief in the first user turn '
        "(this run directory then needs --allow-grid-change, or use a fresh --out)"
    )


def placed(messages: Sequence[Mapping[str, str]], brief_role: str) -> list[Mapping[str, str]]:
    """``messages`` as sent: unchanged for ``brief_role = "system"``; for ``"user"``, the
    system message's text leads the first user turn (a blank line between) and the system
    message is dropped."""
    if brief_role != "user" or not messages or messages[0].get("role") != "system":
        return list(messages)
    brief, rest = messages[0]["content"], list(messages[1:])
    for i, m in enumerate(rest):
        if m.get("role") == "user":
            rest[i] = {**m, "content": f"{brief}\n\n{m['content']}"}
            return rest
    return [{"role": "user", "content": brief}, *rest]
