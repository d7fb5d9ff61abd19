"""The words that carry no step identity (OURS), one list for every reader: the pack checks'
key words (:func:`protocol.domains.packs.key_words`) and the scripted agents' fuzzy reading of a
request (:mod:`serve.agents.resolve`)."""

from __future__ import annotations

__all__ = ["STOP_WORDS"]

# Words that carry no step identity (OURS): function words, the imperative verbs and project
# nouns every template shares, and the user's own address ("I", "you", "now"). One list for
# the pack checks (key_words) and the scripted agents' fuzzy reading (serve.agents.resolve):
# the two lists had drifted (44 and 33 words, 27 shared); the union changes no resolution of
# the built-in packs' messages (issue #45: 190,080 generated user messages, plain and with
# words added, 27,169 of them read fuzzily, resolve alike under either list).
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "for",
        "to",
        "from",
        "in",
        "on",
        "at",
        "by",
        "with",
        "into",
        "onto",
        "as",
        "is",
        "are",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "our",
        "your",
        "their",
        "all",
        "any",
        "each",
        "every",
        "new",
        "final",
        "first",
        "second",
        "per",
        "via",
        "please",
        "up",
        "out",
        "off",
        "now",
        "we",
        "you",
        "i",
        "me",
        "my",
    ]
)
