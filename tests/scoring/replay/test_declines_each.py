"""The decline pre-check of an episode's replies in one scan (``citations.cannot_decline_each``,
#50 eighth round: the anchors as plain strings in one Aho-Corasick pass over the replies'
lowered texts, whitespace runs made single spaces, NULs between replies) answers, reply by
reply, what ``cannot_decline`` answers: on replies made of the anchors' words and pieces
split by every kind of whitespace (the ASCII ones ``\\s`` matches, \\x1c-\\x1f included, and
others), with LEDGER lines, NULs and non-ASCII text (the Kelvin sign lowers to ASCII), and
on anchors split across two replies (which must not match)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from scoring.replay.citations import (
    ANNOTATION_PREFILTER,
    REFUSAL_PREFILTER,
    cannot_decline,
    cannot_decline_each,
)

ANCHORS = sorted(ANNOTATION_PREFILTER.anchors | REFUSAL_PREFILTER.anchors)
WORDS = sorted({w for a in ANCHORS for w in a.split(" ") if w})
CUTS = sorted({w[:i] for w in WORDS for i in range(1, len(w))} | {w[1:] for w in WORDS})
# \s in str patterns: the ASCII whitespace (\x1c-\x1f too) and Unicode spaces (\xa0, \u2003,
# \x85: non-ASCII replies take cannot_decline); \u200b is not whitespace
SPACES = [" ", "\n", "\t", "\r\n", "  ", "\x0b", "\x0c", "\x1c", "\x1f", "\u00a0", "\u2003"]
SPACES += ["\x85", "\u200b", " \n \t "]
GLUE = ["", "x", "'", "\u2019", "-", ".", "i", "\x00", "\u0130", "\u00df", "\u212a", "LEDGER "]
LINES = ["\nLEDGER s1 DONE\n", "LEDGER ", "ledger", "\nx ledger y\n", "LEDGERS", "_ledger"]


@st.composite
def replies(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            anchor = draw(st.sampled_from(ANCHORS))
            words = anchor.split(" ")
            cut = draw(st.integers(0, len(words)))
            words = words[:cut] if draw(st.booleans()) else words[cut:]
            seps = draw(st.lists(st.sampled_from(SPACES), min_size=len(words), max_size=len(words)))
            upper = draw(st.booleans())
            text = "".join(w + s for w, s in zip(words, seps, strict=True))
            parts.append(text.upper() if upper else text)
        elif kind == 1:
            parts.append(draw(st.sampled_from(WORDS + CUTS + SPACES + GLUE + LINES)))
        elif kind == 2:
            parts.append(draw(st.sampled_from(ANCHORS)))
        else:
            parts.append(draw(st.text(max_size=6)))
    return "".join(parts)


def _each(texts: list[str]) -> list[bool]:
    return cannot_decline_each(texts, [t.lower() for t in texts])


@given(st.lists(replies(), max_size=6))
@settings(max_examples=3000, deadline=None)
@example(["i cannot", " be done"])
@example(["already\n", "done"])
@example(["can't be", " "])
@example(["x\x00", "already done"])
@example(["already done\nLEDGER s1 DONE", "ok"])
def test_one_scan_answers_each_replys_pre_check(texts: list[str]) -> None:
    assert _each(texts) == [cannot_decline(t, t.lower()) for t in texts], texts


def test_every_anchor_alone_glued_and_split_across_replies() -> None:
    for anchor in ANCHORS:
        for space in (" ", "\n\t ", "\x1c"):
            text = anchor.replace(" ", space)
            expected = [cannot_decline(t, t.lower()) for t in ("x", text, "y")]
            assert _each(["x", text, "y"]) == expected, text
            if anchor.isascii():
                assert expected == [True, False, True], text
        words = anchor.split(" ")
        if len(words) > 1:  # its words in two replies: neither holds the anchor
            pair = [words[0], " " + " ".join(words[1:])]
            assert _each(pair) == [cannot_decline(t, t.lower()) for t in pair], pair


def test_no_replies() -> None:
    assert cannot_decline_each([], []) == []
