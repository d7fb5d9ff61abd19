"""The fast citation front end gives exactly the answers of scoring.replay.declines."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.state.receipts import find_refs
from scoring.replay.citations import ReplyDeclines, has_refusal_language
from scoring.replay.declines import DECLINE_ANNOTATIONS, REFUSAL_PHRASES, is_citation
from scoring.replay.prefilter import Prefilter, required_literals

FRAGMENTS = [
    "Done.", "Booked the vendor shortlist.", "Step s3 is already done", "no new booking",
    "for reference", "It was cancelled", "s4 is blocked", "nothing is blocked anymore",
    "I cannot perform it", "I won't redo it", "I can't wait", "not booking", "the vendor",
    "declined", "refusal", "The vendor has not declined", "no action will be taken",
    "previously booked", "earlier receipt", "prerequisites s1 and s2 are already done",
    "so", "and", ",", ".", "\n", "\n\n", " ", "--", "It's done", "PRIOR BOOKING",
    "DECLINING", "İ", "ı", "reference", "won\u2019t be performed", "unable to proceed",
    "Cancelled", "without booking", "already completed; no re-execution",
]  # fmt: skip
REFS = ["ref RC-1234/#W5678", "Ref: RC 1234 / W5678", "**ref** RC-1234/#W5678", "ref RC-9/#W1"]

replies = st.lists(st.sampled_from(FRAGMENTS + REFS), min_size=1, max_size=14).map(" ".join)


def _check(reply: str) -> None:
    fast = ReplyDeclines(reply)
    for ref in find_refs(reply):
        assert fast.is_citation(ref.start, ref.end) == is_citation(reply, ref.start, ref.end)
    assert has_refusal_language(reply) == is_citation(reply, 0, len(reply))


@given(replies)
@settings(max_examples=400, deadline=None)
def test_fast_citation_equals_declines_on_generated_replies(reply: str) -> None:
    _check(reply)


WORDS = [
    "no", "need", "to", "redo", "re-do", "book", "booked", "booking", "not", "be", "will",
    "can't", "won’t", "cannot", "can", "already", "been", "done", "for", "your",
    "reference", "i", "I", "am", "unable", "proceed", "is", "was", "has", "cancelled",
    "canceled", "blocked", "decline", "declining", "prior", "earlier", "never", "without",
    "action", "taken", "new", "work", "order", "receipt", "ref", "previously", "shall",
    "going", "anymore", "prerequisite", "so", "and", "NOT", "Already", "performed", "do",
    "ref RC-1234/#W5678", "\nLEDGER s1 DONE\n", "\nLEDGER s2 CANCELLED\n", "LEDGER",
]  # fmt: skip
SEPARATORS = [" ", "  ", "\n", "\t", "\u00a0", "", ", ", ". ", "\n\n", "-"]


@given(st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=30))
@settings(max_examples=500, deadline=None)
def test_fast_citation_equals_declines_on_pattern_vocabulary(words: list[tuple[str, str]]) -> None:
    _check("".join(w + sep for w, sep in words) + " ref RC-1234/#W5678")


@given(
    st.text(
        alphabet=st.sampled_from(list("abcdeiklnoprstuwy '’.,\n\t\u00a0İı#/-RCW0123456789")),
        max_size=120,
    )
)
@settings(max_examples=300, deadline=None)
def test_fast_citation_equals_declines_on_random_text(text: str) -> None:
    _check(text + " ref RC-1234/#W5678 " + text)


@pytest.mark.parametrize(
    "reply",
    [
        "Done: shortlisted three vendors.\nref RC-1234/#W5678",
        "Step s2 is already done; no new booking.\nref RC-1234/#W5678",
        "For reference: ref RC-1234/#W5678",
        "I won't re-execute it.\n\nref RC-1234/#W5678",
        "Nothing is blocked anymore, so here it is: ref RC-1234/#W5678",
        "It was cancelled. ref RC-1234/#W5678 -- the İnvoice",
        "no\nLEDGER s1 DONE\nnew booking needed\nref RC-1234/#W5678",
        "Done.\nLEDGER s3 CANCELLED\n\nref RC-1234/#W5678\nLEDGER s2 DONE\nfor reference",
    ],
)
def test_fast_citation_equals_declines_on_examples(reply: str) -> None:
    _check(reply)


def test_required_literals_of_simple_patterns() -> None:
    assert required_literals(re.compile(r"\bblocked\b", re.I)) == ((frozenset({"blocked"}),),)
    got = required_literals(re.compile(r"\bdeclin(?:e|ed)\b", re.I))
    assert got == ((frozenset({"decline", "declined"}),),)
    # Whitespace runs are one space in the text the pre-check reads.
    got = required_literals(re.compile(r"\bno\s+need\s+to\s+(?:redo|book)", re.I))
    assert got == ((frozenset({"no need to redo", "no need to book"}),),)
    # A run broken by a non-exact piece (\w+) gives a conjunction; an alternation of
    # non-exact branches gives either branch's requirements.
    got = required_literals(re.compile(r"\bnot\s+\w+\s+booking|\bwithout\s+doing", re.I))
    assert got == (
        (frozenset({"not "}), frozenset({" booking"})),
        (frozenset({"without doing"}),),
    )
    assert required_literals(re.compile(r"\w+")) is None
    assert required_literals(re.compile(r"(?:ab|\w+)cd")) is None  # only "cd": too short


@pytest.mark.parametrize("patterns", [DECLINE_ANNOTATIONS, REFUSAL_PHRASES])
def test_prefilter_names_every_pattern_of_both_families(
    patterns: tuple[re.Pattern[str], ...],
) -> None:
    prefilter = Prefilter(patterns)
    assert prefilter.required is not None  # the fast path is in use
    assert not prefilter.may_match("Done: shortlisted three vendors.")
    assert prefilter.may_match("dotless ı anything")  # İ/ı always take the full path


def test_whitespace_runs_and_line_breaks() -> None:
    prefilter = Prefilter(DECLINE_ANNOTATIONS)
    assert prefilter.may_match("No\n\tneed  to\u00a0redo it")
    _check("No\n\tneed  to\u00a0redo it: ref RC-1234/#W5678")
    _check("for\nreference\nref RC-1234/#W5678")


def test_prefilter_never_hides_a_match_of_its_patterns() -> None:
    samples = [f for f in FRAGMENTS if f.strip()]
    for patterns in (DECLINE_ANNOTATIONS, REFUSAL_PHRASES):
        prefilter = Prefilter(patterns)
        for text in samples:
            if any(p.search(text) for p in patterns):
                assert prefilter.may_match(text), text


_RUNS = re.compile(r"\s+")
_SPACES = "".join(c for c in map(chr, range(0x110000)) if c.isspace())


def test_every_character_re_calls_whitespace_str_split_does_too() -> None:
    """``Prefilter.prepare`` splits with ``str.split``; it equals ``\\s+`` only because both
    take the same characters for whitespace, all of Unicode checked."""
    assert _SPACES and all(_RUNS.fullmatch(c) for c in _SPACES)
    odd = [c for c in map(chr, range(0x110000)) if bool(_RUNS.fullmatch(c)) != c.isspace()]
    assert odd == []


@settings(max_examples=400)
@given(
    st.text(
        alphabet=st.one_of(
            st.sampled_from([*_SPACES, "a", "B", "ß", "Σ", "ﬁ", ".", "-"]), st.characters()
        ),
        max_size=40,
    )
)
def test_prepare_folds_whitespace_runs_as_the_regex_does(text: str) -> None:
    """The pre-check's text: case-folded, each whitespace run (an outer one too) one space;
    the same string ``re.sub(r"\\s+", " ", ...)`` gives."""
    got = Prefilter.prepare(text)
    if "\u0130" in text or "\u0131" in text:
        assert got is None
    else:
        assert got == _RUNS.sub(" ", text.casefold())


_LEDGER_RULE = re.compile(r"(?im)^[^\n]*\bLEDGER\b[^\n]*$")  # the rule, as version 2 states it


@settings(max_examples=400)
@given(
    st.lists(
        st.sampled_from(
            [
                "LEDGER s3 CANCELLED",
                "ledger",
                "my ledgers",
                "x_LEDGER",
                "LEDGER.",
                "\r",
                "Ref RC-0001",
                " ",
                "\n",
                "\n\n",
                "ok",
                "Ledger:",
                "éLEDGER",
                "LEDGERé",
                "—LEDGER—",
            ]
        ),
        max_size=12,
    ).map("".join)
)
def test_ledger_lines_are_masked_as_the_multiline_rule_masks_them(reply: str) -> None:
    """``mask_ledger`` line by line equals the version-2 rule's multiline regex blanking."""
    from scoring.replay.declines import mask_ledger

    want = _LEDGER_RULE.sub(lambda m: " " * len(m.group(0)), reply)
    assert mask_ledger(reply) == want and len(want) == len(reply)


LEDGER_FRAGMENTS = [
    "LEDGER s1 DONE", "ledger:", "LEDGERS", "\nLEDGER RC-1234 TODO\n", "\t", "\r\n",
    "\u00df", "STRASSE", "\ufb01", "\u2014", "\u00a0", "\u2003", "CAN\u2019T", "K\u212a",
]  # fmt: skip


@given(st.lists(st.sampled_from(FRAGMENTS + REFS + LEDGER_FRAGMENTS), min_size=1, max_size=14))
@settings(max_examples=600, deadline=None)
def test_cannot_decline_only_where_no_ref_can_be_a_citation(parts: list[str]) -> None:
    """``cannot_decline`` (one search of the lowered reply, the rescoring hot path, #50) is
    True only where the declines rules find no citation anywhere in the reply."""
    from scoring.replay.citations import cannot_decline

    for sep in (" ", "\n", "  \n\t"):
        reply = sep.join(parts)
        if cannot_decline(reply, reply.lower()):
            assert not is_citation(reply, 0, len(reply))
            for ref in find_refs(reply):
                assert not is_citation(reply, ref.start, ref.end)


def test_cannot_decline_reads_each_family_and_leaves_other_text_to_the_full_rules() -> None:
    from scoring.replay.citations import cannot_decline

    for plain in (
        "Carried out s3.\n\nref RC-1234/#W5678\n\nAnything else?",
        "Carried out s3 \u2014 the vendor\u2019s shortlist.\nref RC-1234/#W5678",
        "STRASSE \u00df done.\nLEDGER s1 DONE\nref RC-1234/#W5678",
    ):
        assert cannot_decline(plain, plain.lower()), plain
    for reply in (
        "Step s3 is already done.\nref RC-1234/#W5678",  # an annotation
        "I cannot\n  redo that.\nref RC-1234/#W5678",  # a refusal across a line break
        "I can\nLEDGER s1 DONE\nnot redo it.\nref RC-1234/#W5678",  # the LEDGER line masked
        "\u0130 booked it \u2014 ref RC-1234/#W5678",  # dotted I: the full rules decide
        "I can\u2019t redo it \u2014 ref RC-1234/#W5678",  # a refusal, not ASCII
    ):
        assert not cannot_decline(reply, reply.lower()), reply
