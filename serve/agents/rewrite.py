"""The scripted endpoint's answer to the held-out rewriter's prompt (Appendix A.5).

A request whose last user message opens with ``protocol.strings.REWRITE_PROMPT`` (or is its
retry, ``REWRITE_RETRY``, answered for the prompt before it) gets one rewrite of the quoted
wording: the wording, its courtesy opening dropped, inside one of nine frames chosen by the
rewrite's number and the retries so far, with the step's text added when the wording shares
no word with it. A deterministic test instrument for the rewriter's whole path, not a
paraphrase model.

``rewrite_bad`` (a model-name parameter, default 0): the probability, one seeded draw per
request, of a rewrite that drops the ``{wo}`` placeholder (exercises the retry and the
report of a check that still fails).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence

from protocol import strings
from protocol.episode.paraphrases import content_words
from serve.agents.answer import Answer
from serve.agents.reading import Message, last_user

__all__ = ["REWRITE_PARAMS", "rewrite_answer"]

REWRITE_PARAMS = frozenset({"rewrite_bad"})

_OPENING = strings.REWRITE_PROMPT.split("{")[0]
_RETRY_OPENING = strings.REWRITE_RETRY.split("{")[0]
_REQUEST = re.compile(r"^Request: (?P<wording>.+)$", re.MULTILINE)
_STEP = re.compile(r"the name of the task it asks for \((?P<step>[^)]*)\)")
_NUMBER = re.compile(r"This is rewrite (?P<n>\d+) of")
_COURTESY = re.compile(r"^(please|kindly|could you|can you)\s+", re.IGNORECASE)
_FRAMES = (
    "Could you {r}?",
    "I need you to {r}.",
    "When you have a moment, {r}.",
    "Next on the list: {r}.",
    "Time to {r}.",
    "Go ahead and {r}.",
    "At your convenience, {r}.",
    "We would like you to {r}.",
    "Our request today: {r}.",
)


def _rewrite(prompt: str, retries: int, rng: random.Random, p: Mapping[str, float]) -> str:
    wording_m, step_m, n_m = _REQUEST.search(prompt), _STEP.search(prompt), _NUMBER.search(prompt)
    wording = wording_m["wording"].strip() if wording_m else ""
    step = step_m["step"] if step_m else ""
    n = int(n_m["n"]) if n_m else 1
    rest = _COURTESY.sub("", wording).rstrip(" .!?")
    rest = rest[:1].lower() + rest[1:]
    if step and not content_words(step) & content_words(rest):
        rest = f"{rest}, that is {step}"
    text = _FRAMES[(n - 1 + 3 * retries) % len(_FRAMES)].format(r=rest)
    if rng.random() < p.get("rewrite_bad", 0.0):
        text = text.replace("{wo}", "the order")
    return text


def rewrite_answer(
    messages: Sequence[Message], params: Mapping[str, float], digest: str
) -> Answer | None:
    """The rewrite for a rewriter prompt, or None when the request is something else."""
    # the last user message first: only a rewriter prompt reads every user message (#50)
    last = last_user(messages)
    if not (last.startswith(_OPENING) or last.startswith(_RETRY_OPENING)):
        return None
    users = [c for r, c in messages if r == "user"]
    prompt = next((c for c in reversed(users) if c.startswith(_OPENING)), None)
    if prompt is None:
        return None
    retries = sum(c.startswith(_RETRY_OPENING) for c in users)
    rng = random.Random(f"rewrite|{digest}")
    return Answer(content=_rewrite(prompt, retries, rng, params), reasoning="Rewording.")
