"""The scripted endpoint's answer to the pack reader's prompt (``ladder domain check --model``;
issue #46, ours): a deterministic stand-in for a served model, a test instrument.

A request whose last user message opens with ``protocol.strings.READ_PROMPT`` gets
``{"step": n, "order": b}``: the step whose text shares the most word stems with the message
(0 when none does, or two tie), and whether the message orders it: not when it is a question
without a request form ("could you", "please"), not when a negation governs it ("do not",
"don't", "never", "no need to", "skip", "hold off"), not when it names no step. It reads
words only, as a careless model would not; it cannot tell "a second time" from a plain ask.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from protocol import strings
from protocol.domains.packs import key_words
from serve.agents.answer import Answer
from serve.agents.reading import Message, last_user

__all__ = ["read_answer"]

_OPENING = strings.READ_PROMPT.split("{")[0]
_STEP_LINE = re.compile(r"^(\d{1,3})\. (.+)$", re.MULTILINE)
_MESSAGE = re.compile(r"^Message: (.*)$", re.MULTILINE)
_REQUEST = re.compile(r"\bplease\b|\b(?:could|can|would|will)\s+you\b", re.I)
# A negation that opens the order (the message, or a clause after ':' or 'please'); one inside
# a reason ("the notes were never captured") negates nothing asked.
_NEGATED = re.compile(
    r"(?:^|[:;.]\s*|\bplease\s+)(?:do\s+not|don[’']?t|never|no\s+need\s+to|skip|hold\s+off)\b"
    r"(?!\s+(?:wait|delay|hesitate|worry))",
    re.I,
)
_WORK_ORDER = re.compile(r"\bwork\s+orders?\b|#W\d+", re.I)


def _own(steps: list[tuple[int, str]]) -> list[tuple[int, frozenset[str]]]:
    """Each step's key words that no other step's text uses (as the pack check reads them)."""
    words = [(n, key_words(text)) for n, text in steps]
    return [(n, w.difference(*(o for m, o in words if m != n))) for n, w in words]


def _step(message: str, steps: list[tuple[int, str]]) -> int:
    """The step whose own words the message names most (by their first five letters); 0
    when it names none, or two steps as much."""
    said = {w[:5] for w in key_words(_WORK_ORDER.sub(" ", message))}
    scored = sorted(((sum(x[:5] in said for x in own), n) for n, own in _own(steps)), reverse=True)
    if not scored or scored[0][0] == 0 or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return 0
    return scored[0][1]


def _order(message: str) -> bool:
    if _NEGATED.search(message):
        return False
    return "?" not in message or bool(_REQUEST.search(message))


def read_answer(messages: Sequence[Message]) -> Answer | None:
    """The reading of a pack reader's prompt, or None when the request is something else."""
    prompt = last_user(messages)  # from the end: no step per message (#50)
    if not prompt.startswith(_OPENING):
        return None
    found = _MESSAGE.search(prompt)
    message = found.group(1) if found else ""
    steps = [(int(n), text) for n, text in _STEP_LINE.findall(prompt.split("\n\nMessage:")[0])]
    step = _step(message, steps)
    reading = {"step": step, "order": step != 0 and _order(message)}
    return Answer(content=msgspec.json.encode(reading).decode(), reasoning="Reading.")
