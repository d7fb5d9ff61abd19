"""Receipt parsing: the payload-format matrix (Appendix A.1), classification, ledger, actions."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.records import Booking
from protocol.state.receipts import (
    Action,
    Ref,
    classify,
    find_actions,
    find_refs,
    normalize_code,
    normalize_work_order,
    parse_ledger,
    read_bookings,
    ref_matches,
    ref_matches_each,
)

# --- the format matrix -------------------------------------------------------------------

# (reply, expected (code, work order) pairs in order)
COUNTS: list[tuple[str, list[tuple[str, str]]]] = [
    ("ref RC-2048/#W1234", [("RC-2048", "#W1234")]),
    ("**ref RC-1234/#W5678**", [("RC-1234", "#W5678")]),
    ("__ref RC-1234/#W5678__", [("RC-1234", "#W5678")]),
    ("*ref RC-1234/#W5678*", [("RC-1234", "#W5678")]),
    ("_ref RC-1234/#W5678_", [("RC-1234", "#W5678")]),
    ("`ref RC-1234/#W5678`", [("RC-1234", "#W5678")]),
    ("Done.\n```\nref RC-1234/#W5678\n```", [("RC-1234", "#W5678")]),
    ("> ref RC-1234/#W5678", [("RC-1234", "#W5678")]),
    ("- ref RC-1234/#W5678", [("RC-1234", "#W5678")]),
    ("* ref RC-1234/#W5678", [("RC-1234", "#W5678")]),
    ("1. ref RC-1234/#W5678", [("RC-1234", "#W5678")]),
    ("### ref RC-1234/#W5678", [("RC-1234", "#W5678")]),
    ("ref: RC-1234/#W5678", [("RC-1234", "#W5678")]),
    ("Ref RC-1234/#W5678", [("RC-1234", "#W5678")]),
    ("REF RC-1234/#W5678", [("RC-1234", "#W5678")]),
    ("ref. RC-1234/#W5678", [("RC-1234", "#W5678")]),
    ("**Ref:** RC-1234/#W5678", [("RC-1234", "#W5678")]),
    ("ref RC-1234 / #W5678", [("RC-1234", "#W5678")]),
    ("ref RC 1234/#W5678", [("RC-1234", "#W5678")]),
    ("ref rc-1234/#W5678", [("RC-1234", "#W5678")]),
    ("ref RC1234/#W5678", [("RC-1234", "#W5678")]),
    ("ref RC\u20101234/#W5678", [("RC-1234", "#W5678")]),  # ‐ hyphen
    ("ref RC\u20111234/#W5678", [("RC-1234", "#W5678")]),  # ‑ non-breaking hyphen
    ("ref RC\u20121234/#W5678", [("RC-1234", "#W5678")]),  # ‒ figure dash
    ("ref RC\u20131234/#W5678", [("RC-1234", "#W5678")]),  # – en dash
    ("ref RC\u20141234/#W5678", [("RC-1234", "#W5678")]),  # — em dash
    ("ref RC\u22121234/#W5678", [("RC-1234", "#W5678")]),  # − minus sign
    ("ref RC-1234/# W5678", [("RC-1234", "#W5678")]),
    ("ref RC-1234/#w5678", [("RC-1234", "#W5678")]),
    ("ref RC-1234\uff0f#W5678", [("RC-1234", "#W5678")]),  # full-width slash
    ("ref RC-1234/W5678", [("RC-1234", "#W5678")]),
    ("ref RC-1234/\\#W5678", [("RC-1234", "#W5678")]),  # markdown-escaped hash
    ("ref **RC-1234**/**#W5678**", [("RC-1234", "#W5678")]),
    ("ref RC-1234/#W5678.", [("RC-1234", "#W5678")]),
    ("(ref RC-1234/#W5678)!", [("RC-1234", "#W5678")]),
    ("Booked: ref RC-1234/#W5678.", [("RC-1234", "#W5678")]),
    ("Placing the order now (ref RC-1234/#W5678), as asked.", [("RC-1234", "#W5678")]),
    (
        "ref RC-1111/#W5678 and ref RC-2222/#W5678",
        [("RC-1111", "#W5678"), ("RC-2222", "#W5678")],
    ),
    ("Line one.\r\nref RC-1234/#W5678\r\nbye", [("RC-1234", "#W5678")]),
    ("for reference: ref RC-1234/#W5678", [("RC-1234", "#W5678")]),
]

NOT_COUNTED: list[str] = [
    "I booked code RC-1234 under work order #W5678.",
    "ref RC-1234",  # a code without a work order
    "ref #W5678",  # a work order alone
    "ref RC-123/#W5678",  # 3-digit code
    "ref RC-12345/#W5678",  # 5-digit code
    "ref RC-1234/#W567",  # 3-digit work order
    "ref RC-1234/#W56789",  # 5-digit work order
    "RC-1234/#W5678",  # bare pair: no keyword
    "**RC-1234/#W5678**",
    "reference RC-1234/#W5678",  # 'reference' is prose, not the keyword
    "Reference: RC-1234/#W5678",
    "refs RC-1234/#W5678",
    "xref RC-1234/#W5678",
    "refRC-1234/#W5678",  # keyword glued to the code
    "ref #W5678/RC-1234",  # reversed order
    "ref RC-1234 #W5678",  # no slash
    "ref RC-1234\n/#W5678",  # split across lines
    "ref\nRC-1234/#W5678",
    "ref RC-1234/#W5678x",
    "ref AB-1234/#W5678",
    "",
]


@pytest.mark.parametrize(("reply", "expected"), COUNTS)
def test_format_counts(reply: str, expected: list[tuple[str, str]]) -> None:
    refs = find_refs(reply)
    assert [(r.code, r.work_order) for r in refs] == expected
    for r in refs:
        assert reply[r.start : r.end].lower().startswith("ref")
        assert reply[r.start : r.end] in r.line
        assert "\n" not in r.line and not r.line.endswith("\r")


@pytest.mark.parametrize("reply", NOT_COUNTED)
def test_format_does_not_count(reply: str) -> None:
    assert find_refs(reply) == []


def test_matrix_size() -> None:
    assert len(COUNTS) + len(NOT_COUNTED) >= 20
    assert len(COUNTS) >= 13


def test_span_and_line() -> None:
    text = "Intro line.\n- Booked: **ref RC-4808/#W1941** now\nTail."
    [ref] = find_refs(text)
    assert ref == Ref(
        code="RC-4808",
        work_order="#W1941",
        start=text.index("ref"),
        end=text.index("1941") + 4,
        line="- Booked: **ref RC-4808/#W1941** now",
    )


def test_normalizers() -> None:
    assert normalize_code(" rc 1234 ") == "RC-1234"
    assert normalize_code("RC\u20131234") == "RC-1234"
    assert normalize_code("") is None
    assert normalize_code("RC-12345") is None
    assert normalize_work_order("# w0042") == "#W0042"
    assert normalize_work_order("W1234") == "#W1234"
    assert normalize_work_order("#W1") is None


# --- classify ----------------------------------------------------------------------------

CODES = {"RC-1111": "s1", "RC-2222": "s2", "RC-3333": "s3"}


def test_booking() -> None:
    r = read_bookings("Done.\nref RC-2222/#W5000", CODES, "#W5000")
    assert r.bookings == (Booking(step="s2", code="RC-2222", work_order="#W5000"),)
    assert r.redisplays == () and r.unknown == ()


def test_redisplay_is_never_a_booking() -> None:
    r = read_bookings("Already done earlier: ref RC-2222/#W4000", CODES, "#W5000")
    assert r.bookings == () and r.unknown == ()
    assert [(x.code, x.work_order) for x in r.redisplays] == [("RC-2222", "#W4000")]


def test_unknown_code_with_current_work_order() -> None:
    r = read_bookings("ref RC-9999/#W5000", CODES, "#W5000")
    assert r.bookings == () and r.redisplays == ()
    assert [x.code for x in r.unknown] == ["RC-9999"]


def test_unknown_code_with_stale_work_order_is_a_redisplay() -> None:
    r = read_bookings("ref RC-9999/#W4000", CODES, "#W5000")
    assert r.unknown == () and len(r.redisplays) == 1


def test_duplicate_booking_is_one_booking() -> None:
    text = "ref RC-2222/#W5000\n\n**ref RC-2222/#W5000**\nref rc 2222 / #w5000"
    r = read_bookings(text, CODES, "#W5000")
    assert r.bookings == (Booking(step="s2", code="RC-2222", work_order="#W5000"),)


def test_duplicate_redisplays_and_unknown_deduplicated() -> None:
    text = "ref RC-1111/#W4000 ref RC-1111/#W4000 ref RC-9999/#W5000 ref RC-9999/#W5000"
    r = read_bookings(text, CODES, "#W5000")
    assert len(r.redisplays) == 1 and len(r.unknown) == 1
    assert r.redisplays[0].start < r.unknown[0].start  # first appearance kept


def test_two_codes_are_two_bookings_in_order() -> None:
    r = read_bookings("ref RC-3333/#W5000 then ref RC-1111/#W5000", CODES, "#W5000")
    assert [b.step for b in r.bookings] == ["s3", "s1"]


def test_mixed_reply() -> None:
    text = (
        "s1 was done before (ref RC-1111/#W4000).\n"
        "Now: ref RC-2222/#W5000\n"
        "and ref RC-7777/#W5000\n"
        "ref RC-2222/#W5000"
    )
    r = read_bookings(text, CODES, "#W5000")
    assert [b.step for b in r.bookings] == ["s2"]
    assert [x.work_order for x in r.redisplays] == ["#W4000"]
    assert [x.code for x in r.unknown] == ["RC-7777"]


def test_no_current_work_order_makes_everything_a_redisplay() -> None:
    r = read_bookings("ref RC-2222/#W5000", CODES, None)
    assert r.bookings == () and len(r.redisplays) == 1


def test_codes_and_work_order_are_normalized() -> None:
    r = read_bookings("ref RC-2222/#W5000", {"rc 2222": "s2", "": "s9"}, "# w5000")
    assert r.bookings == (Booking(step="s2", code="RC-2222", work_order="#W5000"),)


def test_classify_takes_refs() -> None:
    refs = find_refs("ref RC-1111/#W0001")
    assert classify(refs, CODES, "#W0001").bookings[0].step == "s1"
    assert classify([], CODES, "#W0001").bookings == ()


# --- ledger ------------------------------------------------------------------------------


def test_ledger_plain_and_tolerant() -> None:
    text = "\n".join(
        [
            "LEDGER RC-1001 DONE",
            "- **LEDGER RC-1003: done**",
            "* ledger rc 1002 todo",
            "`LEDGER RC-1004 CANCELLED`",
            "LEDGER | RC_1005 | Canceled",
            "> LEDGER RC-1006 = To-Do",
            "1. Ledger: Rc-1007 - TO DO",
        ]
    )
    assert parse_ledger(text) == {
        "RC-1001": "DONE",
        "RC-1003": "DONE",
        "RC-1002": "TODO",
        "RC-1004": "CANCELLED",
        "RC-1005": "CANCELLED",
        "RC-1006": "TODO",
        "RC-1007": "TODO",
    }


def test_ledger_last_line_wins_and_skips_junk() -> None:
    text = (
        "LEDGER RC-1001 TODO\nLEDGER RC-1001 DONE\nLEDGER RC-1002 MAYBE\n"
        "LEDGER s3 DONE\nledgers RC-1004 DONE\nLEDGER RC-10055 DONE"
    )
    assert parse_ledger(text) == {"RC-1001": "DONE"}  # step ids are not entries (Section 3.3)


def test_ledger_several_per_line_and_none() -> None:
    assert parse_ledger("LEDGER RC-1001 DONE, LEDGER RC-1002 TODO") == {
        "RC-1001": "DONE",
        "RC-1002": "TODO",
    }
    assert parse_ledger("no ledger lines here") == {}
    assert parse_ledger("") == {}


# --- actions -----------------------------------------------------------------------------


def test_actions_plain_and_markdown() -> None:
    text = (
        'ACTION {"tool": "place_order", "work_order": "#W1234"}\n'
        'Also `ACTION {"tool": "sign_msa", "work_order": "# w0042", "note": "x"}`\n'
        '**ACTION**:  {"work_order": "#W7777", "tool": " audit "}'
    )
    acts = find_actions(text)
    assert [(a.tool, a.work_order) for a in acts] == [
        ("place_order", "#W1234"),
        ("sign_msa", "#W0042"),
        ("audit", "#W7777"),
    ]
    first = acts[0]
    assert first == Action(
        tool="place_order", work_order="#W1234", start=0, end=text.index("}") + 1
    )


def test_actions_malformed_are_skipped() -> None:
    text = "\n".join(
        [
            "ACTION {'tool': 'x', 'work_order': '#W1234'}",
            'ACTION {"tool": "x"}',
            'ACTION {"tool": "", "work_order": "#W1234"}',
            'ACTION {"tool": 3, "work_order": "#W1234"}',
            'ACTION {"tool": "x", "work_order": "#W1234"',
            'ACTION\n{"tool": "x", "work_order": "#W1234"}',
            'ACTION ["x", "#W1234"]',
            "ACTION items: none",
            'TRANSACTION {"tool": "x", "work_order": "#W1234"}',
        ]
    )
    assert find_actions(text) == []


def test_action_keeps_an_unparseable_work_order_verbatim() -> None:
    [a] = find_actions('ACTION {"tool": "x", "work_order": " W-12 "}')
    assert a.work_order == "W-12"


# --- properties --------------------------------------------------------------------------

FORMATS: list[Callable[[str, str], str]] = [
    lambda c, w: f"ref RC-{c}/#W{w}",
    lambda c, w: f"**ref RC-{c}/#W{w}**",
    lambda c, w: f"__ref RC-{c}/#W{w}__",
    lambda c, w: f"`ref RC-{c}/#W{w}`",
    lambda c, w: f"\n```\nref RC-{c}/#W{w}\n```\n",
    lambda c, w: f"\n> ref RC-{c}/#W{w}\n",
    lambda c, w: f"\n- ref RC-{c}/#W{w}\n",
    lambda c, w: f"\n1. Ref: RC-{c}/#W{w}\n",
    lambda c, w: f"REF. rc {c} / # w{w}.",
    lambda c, w: f"ref RC\u2013{c}\uff0f#w{w}",
    lambda c, w: f"ref RC\u2212{c}/W{w},",
    lambda c, w: f"Booked: ref RC\u2011{c}/#W{w}.",
]

# Prose that cannot spell 'ref' (no f) and so cannot add a ref of its own.
PROSE = st.text(alphabet="abcdeghijklmnopqrstuvwxyzABCW .,;:!?\n0123456789-/#*_>", max_size=80)
DIGITS = st.text(alphabet="0123456789", min_size=4, max_size=4)


@given(
    code=DIGITS,
    wo=DIGITS,
    fmt=st.sampled_from(FORMATS),
    before=PROSE,
    after=PROSE,
)
def test_any_format_in_prose_round_trips(
    code: str, wo: str, fmt: Callable[[str, str], str], before: str, after: str
) -> None:
    text = f"{before} {fmt(code, wo)} {after}"
    [ref] = find_refs(text)
    assert (ref.code, ref.work_order) == (f"RC-{code}", f"#W{wo}")
    assert ref.line in text.splitlines()
    r = read_bookings(text, {f"RC-{code}": "s1"}, f"#W{wo}")
    assert r.bookings == (Booking(step="s1", code=f"RC-{code}", work_order=f"#W{wo}"),)


@given(st.text())
def test_text_without_ref_yields_nothing(text: str) -> None:
    if "ref" in text.lower():
        text = text.lower().replace("ref", "r-f")
    assert find_refs(text) == []


@given(st.text(alphabet="refRECW#/ -0123456789*_`\n", max_size=60))
def test_find_refs_never_crashes_and_spans_are_refs(text: str) -> None:
    for ref in find_refs(text):
        assert text[ref.start : ref.end].lower().startswith("ref")
        assert normalize_code(ref.code) == ref.code
        assert normalize_work_order(ref.work_order) == ref.work_order


def test_the_module_docstrings_ledger_examples() -> None:
    import protocol.state.receipts

    doc = protocol.state.receipts.__doc__ or ""
    for line in ("- **LEDGER RC-1234: done**", "LEDGER | RC-1234 | DONE"):
        assert f"``{line}``" in doc
        assert parse_ledger(line) == {"RC-1234": "DONE"}
    assert parse_ledger("- **LEDGER s3: done**") == {}  # a step id is not a ledger key


# --- refs of many texts at once (#50) ----------------------------------------------------

PIECES = [
    "ref RC-1234/#W5678", "Ref: rc 1234 / # w5678", "xref RC-1111/#W2222", "REF RC-1234",
    "/#W5678", "ref", "r", "R", "\n", " ", "RC-12345/#W1", "İ", "\u212a", "ß", "\u0130ref",
    "ref\u00a0RC\u20131234\uff0f#W5678", "ab", "1", "**", "e", "f",
]  # fmt: skip


@given(st.lists(st.lists(st.sampled_from(PIECES) | st.text(max_size=6), max_size=8), max_size=6))
def test_ref_matches_each_is_ref_matches_of_each_text(parts: list[list[str]]) -> None:
    texts = ["".join(p) for p in parts]
    expected = {i: ref_matches(t) for i, t in enumerate(texts) if ref_matches(t)}
    assert ref_matches_each(texts) == expected


ASCII_PIECES = [p for p in PIECES if p.isascii()] + [
    "rEf Rc_1234/W5678", "REF-- RC 1234 \\/ \\#W-5678", "ref RC-1234/#W5678a", "9ref", "Zref",
    "ref RC-1234/#W56789", "\t", "ref\tRC1234/w5678",
]  # fmt: skip


@given(
    st.lists(
        st.lists(
            st.sampled_from(ASCII_PIECES) | st.text(st.characters(max_codepoint=127), max_size=6),
            max_size=8,
        ),
        max_size=6,
    )
)
def test_ref_matches_each_of_ascii_texts_is_ref_matches_of_each_text(
    parts: list[list[str]],
) -> None:
    # ASCII texts take the one search of the lowered text (ref_matches_joined, #50)
    texts = ["".join(p) for p in parts]
    expected = {i: ref_matches(t) for i, t in enumerate(texts) if ref_matches(t)}
    assert ref_matches_each(texts) == expected


def test_ref_matches_each_reads_each_texts_edges() -> None:
    # a text's first 'ref' and last digit meet the next text's only across the newline
    texts = ["ref RC-1234/#W5678", "ref RC-1111/#W2222x", "xref RC-1/#W1", "", "Ref RC-2222/#W3333"]
    assert ref_matches_each(texts) == {
        0: [("RC-1234", "#W5678", 0, 18)],
        4: [("RC-2222", "#W3333", 0, 18)],
    }
    assert ref_matches_each(["İ ref RC-1234/#W5678"]) == {0: [("RC-1234", "#W5678", 2, 20)]}
