"""Answers to Mem0's memory-extraction prompt (mem0ai 2.x, ``ADDITIVE_EXTRACTION_PROMPT``).

mem0 sends its extraction prompt as the system message and a user message with sections
``## Summary``, ``## Last k Messages``, ``## Existing Memories``, ``## New Messages`` (lines
``user: ...`` / ``assistant: ...``), ... and expects ``{"memory": [{"text": ...,
"attributed_to": "user" | "assistant"}, ...]}``. The answer is what an extractor plausibly
keeps of a turn of this testbed, one self-contained fact per item: the user's request (its
first paragraph), each booking the assistant's reply makes (its ref lines), and otherwise
the reply's first sentence. Nothing here imports mem0; the markers are its prompt's words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import orjson

from serve.agents.answer import Answer
from serve.agents.reading import Message

__all__ = ["MEM0_MARKER", "mem0_answer"]

MEM0_MARKER = "You are a Memory Extractor"  # mem0's ADDITIVE_EXTRACTION_PROMPT
_NEW = re.compile(r"## New Messages\n(.*?)\n\n## ", re.DOTALL)
_TURN = re.compile(r"^(user|assistant): ", re.MULTILINE)
_REF = re.compile(r"ref\s+(RC-\d{4})\s*/\s*(#W\d{4})", re.IGNORECASE)


def _turns(block: str) -> list[tuple[str, str]]:
    marks = list(_TURN.finditer(block))
    return [
        (m[1], block[m.end() : marks[i + 1].start() if i + 1 < len(marks) else len(block)].strip())
        for i, m in enumerate(marks)
    ]


def _facts(role: str, text: str) -> list[dict[str, str]]:
    if role == "user":
        first = " ".join(text.split("\n\n")[0].split())
        return [{"text": f"The user asked: {first}", "attributed_to": "user"}] if first else []
    refs = _REF.findall(text)
    if refs:
        return [
            {
                "text": f"The assistant booked {code} for work order {wo}.",
                "attributed_to": "assistant",
            }
            for code, wo in refs
        ]
    first = re.split(r"(?<=[.!?])\s", " ".join(text.split()), maxsplit=1)[0]
    return (
        [{"text": f"The assistant replied: {first}", "attributed_to": "assistant"}] if first else []
    )


def mem0_answer(messages: Sequence[Message]) -> Answer | None:
    """The extraction answer when ``messages`` are mem0's extraction prompt, else None."""
    # a list comprehension, not a generator under any(): no step per message of every
    # request's transcript (the usual request is no extraction prompt; #50)
    if not [c for r, c in messages if r == "system" and MEM0_MARKER in c]:
        return None
    user = next((c for r, c in reversed(messages) if r == "user"), "")
    found = _NEW.search(user + "\n\n## ")
    memories = [f for role, text in _turns(found[1] if found else "") for f in _facts(role, text)]
    return Answer(
        content=orjson.dumps({"memory": memories}).decode(), reasoning="Extracting memories."
    )
