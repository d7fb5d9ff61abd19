"""The words of a pack's text (pure): a brief text's key words, the stems a wording names a
step by, and a resolver that never reads the pack's wording lists
(:func:`reads_as`), which the pack checks (:mod:`protocol.domains.pack_rules`) hold every
wording to."""

from __future__ import annotations

import re

from protocol.domains.shape import DomainPool
from protocol.domains.stop_words import STOP_WORDS

__all__ = ["CJK", "key_words", "own_words", "reads_as", "stem", "stems"]

# A word: a run of letters in any script (``café`` is one word, not ``caf``); a run of CJK
# ideographs or kana, written without spaces, counts each character as a word.
_WORD = re.compile(r"[^\W\d_]+")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_WORK_ORDER = re.compile(r"\bwork\s+orders?\b", re.IGNORECASE)


def tokens(text: str) -> list[str]:
    """The words of ``text``, casefolded; CJK runs split into their characters."""
    out: list[str] = []
    for w in _WORD.findall(text.casefold()):
        out += list(w) if CJK.search(w) else [w]
    return out


def key_words(text: str) -> frozenset[str]:
    """The content words of a brief text (casefolded, function words dropped; a CJK
    character is a word of its own)."""
    return frozenset(
        w for w in tokens(text) if w not in STOP_WORDS and (len(w) > 2 or CJK.match(w))
    )


def stem(word: str) -> str:
    return word[:5]


def stems(text: str) -> set[str]:
    return {stem(w) for w in tokens(text)}


def _norm(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def reads_as(wording: str, own: list[frozenset[str]], mine: int) -> list[tuple[float, int]]:
    """A resolver that never reads the pack's wording lists: how many of each template's own
    key words the wording names, most first (ties by template order). Conservative for a
    refusal: the wording's own template ``mine`` counts a word by its stem, another
    template only by the whole word (a plural's ``s`` aside)."""
    text = _WORK_ORDER.sub(" ", wording)  # the protocol's own words name no step
    named, words = stems(text), {_norm(w) for w in tokens(text)}
    scores = [
        (float(sum((stem(x) in named) if i == mine else (_norm(x) in words) for x in keys)), i)
        for i, keys in enumerate(own)
    ]
    return sorted(scores, key=lambda x: (-x[0], x[1]))


def own_words(pool: DomainPool) -> list[frozenset[str]]:
    """Each template's key words no other template's text uses."""
    words = [key_words(t.text) for t in pool.templates]
    return [w.difference(*(o for j, o in enumerate(words) if j != i)) for i, w in enumerate(words)]
