"""Decline-aware scoring: citations inside refusals versus true bookings (Appendix A.2)."""

from __future__ import annotations

import pytest

from protocol.state.receipts import find_refs
from scoring.replay.declines import (
    DECLINE_ANNOTATIONS,
    DECLINE_REGEX_VERSION,
    REFUSAL_PHRASES,
    WINDOW_CHARS,
    citation_window,
    is_citation,
    is_refusal,
)

REF = "ref RC-1234/#W5678"

# Current-work-order ref lines written inside a decline: citations, not executions.
DECLINES: list[str] = [
    f"Step s3 was cancelled, so no action will be taken.\n{REF}",
    f"s4 is blocked -- missing prerequisites: s1, s2. I will not perform it.\n{REF}",
    f"This step is already done; I am not booking a new work order.\n{REF}",
    f"For reference: {REF}",
    f"Previously booked: {REF} (no new booking).",
    f"Step s2 is already completed. No new work order will be booked.\n{REF}",
    f"I must decline this request.\n{REF}",
    f"I can't perform s5 yet: s4 is still pending.\n{REF}",
    f"Declining: s3 was cancelled in the revision.\n{REF}",
    f"{REF} -- cited for the earlier completion only; it will not be performed again.",
    f"The step cannot be performed until s1 is complete.\n{REF}",
    f"I refuse to book a cancelled step; the line below is only a citation.\n{REF}",
    f"Unable to proceed: prerequisites missing.\n{REF}",
    f"This step is blocked, so I do not perform it.\n\n{REF}",
    f"s2 has already been done.\n\n\n**{REF}**\n\nNo need to redo it.",
    "I won't execute this again -- it was completed on the earlier work order.\n\n"
    + "Details follow.\n" * 6
    + REF,
    f"The order is cancelled; do not worry, it won't be executed.\n- {REF}",
    f"Already DONE (earlier completion shown): {REF}",
    f"No further action is needed since s1 is already complete.\n{REF}",
    f"That step was declined by the gate, so {REF} is shown for the record.",
    f"s3 is already done; no need to perform it again.\n{REF}",
    f"Already completed earlier, and I will not redo it without an explicit order.\n{REF}",
    f"Step s1 has already been completed (do not redo). Citing it: {REF}",
]

# True bookings that merely mention a refusal word or a negation.
BOOKINGS_WITH_TRAPS: list[str] = [
    f"No problem, done: {REF}",
    f"The vendor has not declined; booked: {REF}",
    f"Nothing is blocked anymore, executing now: {REF}",
    f"I can't wait to start \u2014 performing it now: {REF}",
    f"s4 is no longer blocked now that s2 is done. Executing s4:\n{REF}",
    f"This step was not cancelled in the revision, so I am performing it now: {REF}",
    f"No refusal needed: the prerequisites are met.\n{REF}",
    f"Prerequisites s1 and s4 are already done, so s2 can be performed now.\n{REF}",
    f"I won't delay this any further \u2014 performing it now: {REF}",
    f"There is nothing I cannot do here; booking it: {REF}",
    f"The client hasn\u2019t declined the quote, so the order is placed: {REF}",
    f"Nothing here is cancelled or blocked; executing now: {REF}",
    f"Not cancelled, not blocked -- executing: {REF}",
    f"Unable to find any blocker; proceeding with the order: {REF}",
    f"s5 isn't blocked any more, so here it is.\n{REF}",
    f"All of its dependencies are already completed; placing the order.\n{REF}",
    # authorized redos name the earlier completion and still book
    f"s3 was already completed earlier, but you explicitly authorized a redo, so performing "
    f"it again now:\n{REF}",
    f"Redoing the previously completed step as you asked: {REF}",
    f"Re-executing s2 (the earlier completion is superseded by your order): {REF}",
]

PLAIN_BOOKINGS: list[str] = [
    f"Done.\n{REF}",
    f"Executing s2 now: {REF}",
    f"Placed the main equipment order.\n\n**{REF}**",
    f"- Budget code set up in the finance system.\n- {REF}",
    f"{REF}",
]


def _only_ref(reply: str) -> tuple[int, int]:
    [ref] = find_refs(reply)
    assert ref.code == "RC-1234" and ref.work_order == "#W5678"
    return ref.start, ref.end


@pytest.mark.parametrize("reply", DECLINES)
def test_declines_are_citations(reply: str) -> None:
    assert is_citation(reply, *_only_ref(reply))


@pytest.mark.parametrize("reply", BOOKINGS_WITH_TRAPS + PLAIN_BOOKINGS)
def test_bookings_are_not_citations(reply: str) -> None:
    assert not is_citation(reply, *_only_ref(reply))


def test_matrix_size() -> None:
    assert len(DECLINES) >= 12
    assert len(BOOKINGS_WITH_TRAPS) >= 10
    assert len(PLAIN_BOOKINGS) >= 3


def test_version_and_families() -> None:
    assert DECLINE_REGEX_VERSION == "2"
    assert len(DECLINE_ANNOTATIONS) >= 10 and len(REFUSAL_PHRASES) >= 5


@pytest.mark.parametrize(
    ("reply", "refusal"),
    [
        ("I cannot perform s3: it is cancelled.", True),
        ("I must decline.", True),
        ("s4 is blocked, so I will not perform it.", True),
        ("s2 is already done; I will not book a new work order.", True),
        ("Sorry, I'm not performing this again.", True),
        ("I can't wait to start.", False),
        ("I'm not declining anything.", False),
        ("Done.", False),
    ],
)
def test_is_refusal(reply: str, refusal: bool) -> None:
    assert is_refusal(reply) is refusal


def test_window_is_adjacent_non_blank_lines() -> None:
    reply = "far: cancelled\nnear above\n\n" + REF + "\n\nnear below\nfar: blocked"
    start, end = _only_ref(reply)
    lo, hi = citation_window(reply, start, end)
    assert reply[lo:hi] == "near above\n\n" + REF + "\n\nnear below"
    assert not is_citation(reply, start, end)  # the annotations sit two lines away


def test_window_is_clipped_on_one_long_line() -> None:
    reply = "s3 is cancelled. " + "x" * (WINDOW_CHARS + 20) + " " + REF
    start, end = _only_ref(reply)
    lo, hi = citation_window(reply, start, end)
    assert (lo, hi) == (start - WINDOW_CHARS, end)
    assert not is_citation(reply, start, end)


def test_window_clamps_bad_spans() -> None:
    assert citation_window("abc", -5, 99) == (0, 3)
    assert citation_window("", 0, 0) == (0, 0)


def test_ledger_lines_are_not_decline_annotations() -> None:
    """Version 2: a booking followed by the self-ledger (with a CANCELLED entry) is a
    booking, not a citation; the same refusal words in prose still cite."""
    from scoring.replay.declines import DECLINE_REGEX_VERSION, is_citation

    assert DECLINE_REGEX_VERSION == "2"
    reply = (
        "Performing step s2 now.\nref RC-1234/#W5678\n"
        "LEDGER s1 DONE\nLEDGER s2 DONE\nLEDGER s3 CANCELLED\nLEDGER s4 TODO"
    )
    start = reply.index("ref RC")
    assert not is_citation(reply, start, start + len("ref RC-1234/#W5678"))
    prose = "Step s3 was cancelled, so no action will be taken.\nref RC-1234/#W5678"
    start = prose.index("ref RC")
    assert is_citation(prose, start, start + len("ref RC-1234/#W5678"))
