"""The decline pre-check's searches, each skipping to one pivot character
(``prefilter.raw_text_searches``, #50 seventh round), find a match exactly where the one
regex (``prefilter.raw_text_regex``) does: on random text, on text made of the anchors'
pieces (their heads cut before and after the pivot, glued to letters, split by every kind of
whitespace, at the text's start and end), and for other pattern families (an anchor that
starts with a space included)."""

from __future__ import annotations

import re
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.replay.citations import ANNOTATION_PREFILTER, REFUSAL_PREFILTER
from scoring.replay.prefilter import Prefilter, raw_text_regex, raw_text_searches

FAMILIES = (ANNOTATION_PREFILTER, REFUSAL_PREFILTER)
OTHER = (
    Prefilter([re.compile(r"\bfoo\s+bar"), re.compile(r"qux(?:es)?"), re.compile(r"\s+lead\s+in")]),
    Prefilter([re.compile(r"ab\s*cd\s+ef"), re.compile(r"(?:no|yes)\s+way")]),
)
ANCHORS = sorted(ANNOTATION_PREFILTER.anchors | REFUSAL_PREFILTER.anchors)
SPACES = [" ", "\n", "\t", "  \n", "\u00a0", "\u2003", "\r\n"]
# every anchor's words, and each word cut at every place: a match's pieces and near misses
WORDS = sorted({w for a in ANCHORS for w in a.split(" ") if w})
CUTS = sorted(
    {w[:i] for w in WORDS for i in range(1, len(w))}
    | {w[i:] for w in WORDS for i in range(1, len(w))}
)
GLUE = ["x", "'", "\u2019", "-", "#", "1", "", ".", "i", "n", "a"]


_COMPILED: dict[tuple[int, ...], tuple[re.Pattern[str], tuple[Callable[[str], object], ...]]] = {}


def _either(prefilters: tuple[Prefilter, ...], text: str) -> tuple[bool, bool]:
    key = tuple(map(id, prefilters))
    if key not in _COMPILED:
        one, searches = raw_text_regex(*prefilters), raw_text_searches(*prefilters)
        assert one is not None and searches is not None
        _COMPILED[key] = (one, searches)
    one, searches = _COMPILED[key]
    return one.search(text) is not None, any(s(text) is not None for s in searches)


def _anchor_text(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 6))):
        anchor = draw(st.sampled_from(ANCHORS))
        words = anchor.split(" ")
        cut = draw(st.integers(0, len(words)))
        words = words[:cut] if draw(st.booleans()) else words[cut:]
        seps = draw(st.lists(st.sampled_from(SPACES), min_size=len(words), max_size=len(words)))
        parts.append(
            draw(st.sampled_from(GLUE)) + "".join(w + s for w, s in zip(words, seps, strict=True))
        )
        parts.append(draw(st.sampled_from(GLUE + CUTS + SPACES)))
    return "".join(parts)


@st.composite
def texts(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return draw(st.text(max_size=40))
    if kind == 1:
        return "".join(draw(st.lists(st.sampled_from(WORDS + CUTS + SPACES + GLUE), max_size=12)))
    return _anchor_text(draw)


@given(texts())
@settings(max_examples=3000, deadline=None)
def test_the_searches_match_where_the_one_regex_does(text: str) -> None:
    for t in (text, text.lower(), text.strip()):
        one, searched = _either(FAMILIES, t)
        assert one == searched, t


@given(
    st.lists(
        st.sampled_from(
            [
                "foo",
                "bar",
                "qux",
                "es",
                "lead",
                "in",
                "ab",
                "cd",
                "ef",
                "no",
                "yes",
                "way",
                "x",
                *SPACES,
            ]
        ),
        max_size=10,
    )
)
@settings(max_examples=1000, deadline=None)
def test_other_families_too(parts: list[str]) -> None:
    text = "".join(parts)
    for family in OTHER:
        one, searched = _either((family,), text)
        assert one == searched, text


def test_every_anchor_is_found_alone_and_glued() -> None:
    for anchor in ANCHORS:
        for glue in ("", "x", "\n"):
            for space in (" ", "\n\t "):
                text = glue + anchor.replace(" ", space) + glue
                assert _either(FAMILIES, text) == (True, True), text
        # one character short at either end: the one regex and the searches agree
        for text in (anchor[1:], anchor[:-1]):
            one, searched = _either(FAMILIES, text)
            assert one == searched, text
