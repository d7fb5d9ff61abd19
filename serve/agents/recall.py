"""The perfect agent's memory of its own earlier sessions of an episode (the sessions knob,
issue #48; docs/semantics.md, "The oracle remembers").

The perfect agent is the instrument's oracle: perfect compliance and perfect memory. A
deployed agent with a memory store keyed by a conversation or user id (mem0's ``user_id``)
remembers its earlier sessions; the perfect agent does the same, keyed by the runner's
lineage token (:data:`protocol.draws.LINEAGE_HEADER`; the store: :mod:`serve.endpoint.lineage`).
What it remembers is its own complete handoff note (:func:`serve.agents.note.note_lines`) of
the transcript it last answered; at a fresh session it reads it as if carried: the lines join
the carried note block of the session's first user message, or open one
(:data:`protocol.rule_strings.HANDOFF_CARRIED`) at that message's end. Read back by
:func:`serve.agents.handoff.read_carried` as every carried note is.
"""

from __future__ import annotations

from collections.abc import Sequence

from protocol import rule_strings
from serve.agents.note import note_lines
from serve.agents.reading import Message

__all__ = ["is_fresh", "recalled", "remembered"]

_OPENING = rule_strings.HANDOFF_CARRIED.split("{")[0].split("\n")[0]  # "[HANDOFF NOTE] ..."


def is_fresh(messages: Sequence[Message]) -> bool:
    """Whether ``messages`` open a session: no reply of the agent's in them yet."""
    return all(role != "assistant" for role, _ in messages)


def remembered(transcript: Sequence[Message]) -> tuple[str, ...]:
    """What the agent remembers of ``transcript`` (its last request and its reply): its
    complete handoff note's lines, what it carried into the transcript included."""
    return tuple(note_lines(transcript))


def _merged(content: str, lines: Sequence[str]) -> str:
    """``content`` with ``lines`` in its carried note block (those it lacks), or with a block
    of them at its end when it has none."""
    at = content.find(_OPENING)
    if at < 0:
        note = rule_strings.HANDOFF_CARRIED.format(note="\n".join(lines))
        return f"{content}\n\n{note}"
    end = content.find("\n\n", at)
    end = len(content) if end < 0 else end
    have = set(content[at:end].splitlines()[1:])
    extra = "".join(f"\n{x}" for x in lines if x not in have)
    return content[:end] + extra + content[end:]


def recalled(messages: tuple[Message, ...], lines: Sequence[str]) -> tuple[Message, ...]:
    """``messages`` as the remembering agent reads them: ``lines`` carried into the first
    user message (``messages`` itself when there is nothing to carry)."""
    if not lines:
        return messages
    for i, (role, content) in enumerate(messages):
        if role in ("system", "developer"):
            continue
        if role != "user":
            return messages
        return (*messages[:i], (role, _merged(content, lines)), *messages[i + 1 :])
    return messages
