"""Fast, exact front ends to :mod:`scoring.replay.declines` for the rescoring hot path.

:func:`scoring.replay.declines.is_citation` runs about twenty regular expressions per ref (tens of
microseconds). Most replies contain none of the words those patterns need, so a keyword
pre-check (:class:`scoring.replay.prefilter.Prefilter`, derived from the two pattern families
themselves) answers "not a citation" for them without running any pattern; when the
pre-check passes, the rules of :mod:`scoring.replay.declines` decide, unchanged. The pre-check only
ever skips texts no pattern can match, so the answers are those of
:func:`scoring.replay.declines.is_citation` (checked by a test on many replies). Like the families,
the pre-check reads the reply with its self-ledger lines blanked (``mask_ledger``, imported
so that the two can never differ on which text is read).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import repeat
from operator import call

from ahocorasick_rs import BytesAhoCorasick, Implementation

from scoring.replay.declines import (
    DECLINE_ANNOTATIONS,
    REFUSAL_PHRASES,
    citation_window,
    is_citation,
    is_refusal,
    mask_ledger,  # the families read the reply with its LEDGER lines blanked; so do we
)
from scoring.replay.prefilter import Prefilter, raw_text_searches

__all__ = [
    "ANNOTATION_PREFILTER",
    "REFUSAL_PREFILTER",
    "ReplyDeclines",
    "cannot_decline",
    "cannot_decline_each",
    "has_refusal_language",
]

ANNOTATION_PREFILTER = Prefilter(DECLINE_ANNOTATIONS)
REFUSAL_PREFILTER = Prefilter(REFUSAL_PHRASES)
# both pre-checks' first searches, on the lowered reply as it is (#50): a few searches, each
# skipping to one character (``raw_text_searches``: the one ``raw_text_regex``'s matches)
_EITHER = raw_text_searches(ANNOTATION_PREFILTER, REFUSAL_PREFILTER)
# the ASCII characters ``\s`` matches in a str pattern (those ``str.isspace`` calls space)
_SPACES = bytes(c for c in range(128) if chr(c).isspace())
_TO_SPACE = bytes.maketrans(_SPACES, b" " * len(_SPACES))
_RUNS = re.compile(b"  +")  # a run of spaces, made one (a quarter fewer instructions than
# ``bytes.replace`` until none is left, whose passes a masked LEDGER line's run multiplies)
_SEP = "\x00"  # between replies in :func:`cannot_decline_each`'s one text: no anchor holds it


def _anchor_automaton() -> BytesAhoCorasick | None:
    """Every ASCII anchor of both pre-checks' first searches (an anchor with another
    character cannot occur in ASCII text), for text whose whitespace runs are single spaces;
    None where ``_EITHER`` is."""
    if _EITHER is None:
        return None
    anchors = {s for p in (ANNOTATION_PREFILTER, REFUSAL_PREFILTER) for s in p.anchors}
    ascii_ = sorted(s.encode() for s in anchors if s.isascii())
    assert all(a.strip(b" ") and b"  " not in a and b"\x00" not in a for a in ascii_)
    return BytesAhoCorasick(ascii_, implementation=Implementation.DFA)


_ANCHORS = _anchor_automaton()


class ReplyDeclines:
    """Decline checks on one reply. The reply is prepared for the pre-checks once; the whole-reply refusal
    verdict is computed once; and when the whole reply cannot hold a decline annotation, no
    window of it can, so refs need no window at all."""

    __slots__ = ("_annotations", "_folded", "_masked", "_refusal", "reply")

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self._masked = mask_ledger(reply)
        self._folded = Prefilter.prepare(self._masked)
        self._refusal: bool | None = None
        self._annotations: bool | None = None

    def _may(self, prefilter: Prefilter) -> bool:
        return self._folded is None or prefilter.may_match_prepared(self._folded)

    @property
    def refusal(self) -> bool:
        """:func:`scoring.replay.declines.is_refusal` of the reply."""
        if self._refusal is None:
            self._refusal = self._may(REFUSAL_PREFILTER) and is_refusal(self.reply)
        return self._refusal

    def is_citation(self, start: int, end: int) -> bool:
        """:func:`scoring.replay.declines.is_citation` of the ref at ``reply[start:end]``."""
        if self.refusal:
            return True
        if self._annotations is None:
            self._annotations = self._may(ANNOTATION_PREFILTER)
        if not self._annotations:
            return False
        lo, hi = citation_window(self._masked, start, end)
        if not ANNOTATION_PREFILTER.may_match(self._masked[lo:hi]):
            return False
        return is_citation(self.reply, start, end)


def has_refusal_language(reply: str) -> bool:
    """True when *reply* carries any decline annotation or refusal phrasing anywhere.

    Used for refused bookings whose ref line is not in the visible reply (the same-turn
    notice): the whole reply is the citation window.
    """
    return ReplyDeclines(reply).is_citation(0, len(reply))


def _as_read(reply: str, lowered: str) -> tuple[str, str]:
    """*reply* and its ``lower()`` (*lowered*) as the families read it: its LEDGER lines
    blanked (:func:`mask_ledger`; masked ASCII text stays ASCII)."""
    if "ledger" in lowered:
        reply = mask_ledger(reply, lowered)
        return reply, reply.lower()
    return reply, lowered


def cannot_decline(reply: str, lowered: str) -> bool:
    """True only when no ref of *reply* can be a citation (``ReplyDeclines(reply)`` would
    answer False for every span): neither pre-check can match. *lowered* is
    ``reply.lower()``, which the caller has in hand. A few searches of the case-folded reply (its
    LEDGER lines masked first, as the families read it), whitespace runs matched as the
    pre-checks' single spaces; ``lower`` is ``casefold`` for ASCII text. A reply holding
    ``İ`` or ``ı`` (which the pre-checks never rule out) is left to :class:`ReplyDeclines`."""
    if _EITHER is None or "\u0130" in reply or "\u0131" in reply:
        return False
    reply, lowered = _as_read(reply, lowered)
    folded = lowered if reply.isascii() else reply.casefold()
    return not any(map(call, _EITHER, repeat(folded)))  # no generator frame per reply


# between the lowered replies masked at once (:func:`_masked`): a line of its own
_LINE_SEP = "\n" + _SEP + "\n"


def _masked(lowered: Sequence[str]) -> str:
    """``_SEP.join(_as_read(r, low)[1] ...)`` of ASCII replies whose ``lower()`` are
    *lowered*, masked in one call (#50, ninth round): a LEDGER line is blanked alike in a
    reply and in its lowered text (a run of lines is blanked whole, newlines kept, and in
    ASCII text ``lower`` keeps every offset), and joined by :data:`_LINE_SEP` each reply's
    lines are lines of the join (a line's edges read as a reply's edges: no word character),
    the separator's own line holding no "ledger": the masked join is the masked replies
    joined. A reply holding a NUL can make a separator of its own; the caller's count of
    NULs sends every reply to :func:`cannot_decline` then."""
    joined = _LINE_SEP.join(lowered)
    return mask_ledger(joined, joined).replace(_LINE_SEP, _SEP)  # lowered: its own lower()


def cannot_decline_each(replies: Sequence[str], lowered: Sequence[str]) -> list[bool]:
    """``[cannot_decline(r, l) for r, l in zip(replies, lowered)]``, the ASCII replies read
    in one pass (#50, eighth round): their lowered texts (LEDGER lines masked, as
    :func:`cannot_decline` reads them) joined by NULs, every whitespace character made a
    space and each run of spaces one, then one Aho-Corasick scan finds the anchors as plain
    strings. An anchor's spaces stand for ``\\s+`` between non-space characters, so it occurs
    in the text with single spaces exactly where the searches match it in the original; no
    anchor holds a NUL, so no match spans two replies. The other replies, and every reply
    where one holds a NUL, by :func:`cannot_decline`."""
    out = [False] * len(replies)
    if _ANCHORS is None:
        return out  # cannot_decline's answer where _EITHER is None
    fast: Sequence[int] = range(len(replies))
    texts = list(lowered)
    if not all(map(str.isascii, replies)):  # the common call has none: no walk (#50)
        fast, texts = [], []
        for k, (reply, low) in enumerate(zip(replies, lowered, strict=True)):
            if not reply.isascii():
                out[k] = cannot_decline(reply, low)
                continue
            fast.append(k)
            texts.append(low)
    joined = _SEP.join(texts)
    if "ledger" in joined:  # as cannot_decline reads them: LEDGER lines masked (_masked)
        joined = _masked(texts)
    if joined.count(_SEP) != len(texts) - 1:  # a reply holds a NUL: each one on its own
        for k in fast:
            out[k] = cannot_decline(replies[k], lowered[k])
        return out
    text = _RUNS.sub(b" ", joined.encode("ascii").translate(_TO_SPACE))
    for k in fast:
        out[k] = True
    k = at = 0  # the matches come in order: the NULs before each counted from the last
    for _, start, _ in _ANCHORS.find_matches_as_indexes(text):
        k += text.count(0, at, start)
        at = start
        out[fast[k]] = False
    return out
