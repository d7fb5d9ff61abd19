"""Decline-aware scoring (Appendix A.2): is a current-work-order ref line a citation?

Under the primary scoring every ref line carrying the current work order and a known code is
a booking. Under decline-aware scoring such a line is a *citation* rather than an execution
when its surrounding text matches a fixed family of decline annotations, or the whole reply
matches a fixed family of refusal phrasings. Both families are precompiled here, versioned
by :data:`DECLINE_REGEX_VERSION`; any change to a pattern, a guard, or the window bumps it.

Version 1 rules
---------------
* Which refs: this module is asked only about refs the primary scoring already counts as
  bookings (current work order, known code); re-displays never execute under either scoring.
* Window (:func:`citation_window`): the ref's own line plus the nearest non-blank line
  above and the nearest non-blank line below it (blank lines are skipped, so a paragraph
  break does not hide an annotation), clipped to at most :data:`WINDOW_CHARS` (160)
  characters before the ref's start and after its end. A decline annotation counts only
  inside this window; two lines away it does not.
* :data:`DECLINE_ANNOTATIONS` (searched in the window, case-insensitive):
  "for (your) reference", "as a citation";
  "previously/earlier (been) booked|recorded|logged|performed|executed|completed|done";
  "earlier/previous/prior/original/existing completion|receipt|booking|execution|ref";
  "already (been) done|complete(d)|finished|performed|executed|booked|recorded";
  "not / n't (be) (re)book(ing|ed)", "without (re)booking";
  "no new work order|booking|ref|receipt";
  "no (further|new) action will be|is being|is|has been|was|taken|needed|required|necessary";
  "no need to redo|re-execute|re-perform|rebook|repeat|book|perform|execute";
  "will not / won't / cannot / can't / shall not be performed|executed|booked|carried
  out|done|redone|re-executed"; "cancel(l)ed"; "blocked"; "declin(e|ed|es|ing)";
  "refus(e|ed|es|ing|al)".
* :data:`REFUSAL_PHRASES` (searched in the whole reply, case-insensitive):
  "I cannot / can't / can not / won't / will not / shall not / 'll not / am (I'm) unable to /
  am (I'm) not going to" immediately followed by "(re-)perform|do|execute|book|carry
  out|proceed with|redo|complete"; "I (must|have to|will|'ll|need to|am going to)
  (respectfully) decline"; "declining"; "not (be) performing|executing|booking"; "unable to
  proceed"; "is|was|has been (now) cancel(l)ed|blocked" followed within 160 characters by
  "do/did/will/shall/should/must/can not (n't), or won't, (be) (re-)perform|execut|book|carry
  out|do|proceed"; "already (been) done|completed|..." followed within 160 characters by
  "no|not|never|without (a|any|another|new|re-)* book|re-execut|redo|repeat|perform|execut".
* Negation guard (every hit of both families): a hit is ignored when the clause before it
  ends with a negator followed by at most four words. Negators: not, no, never, nothing,
  none, neither, nor, without, hardly, "n't" (any apostrophe), and an "un-" prefix. Clauses
  break at ``. ; : ! ? , ( ) [ ]``, en and em dashes, ``--``, a spaced hyphen, line breaks,
  and the words because, since, so, but, however, although, though, while, whereas, then,
  and, as, which, that (not "or": "nothing is cancelled or blocked" stays one clause). So
  "The vendor has not declined", "Nothing is blocked anymore", "No refusal needed", "There
  is nothing I cannot do here" and "Not cancelled, not blocked" are not declines, while
  "not booking" itself (a pattern that carries its own negator) still is.
* Release guard (every hit): a hit followed within three words by "anymore", "any more" or
  "any longer" is ignored ("s4 isn't blocked any more").
* Prerequisite guard ("already done" annotations only): a hit whose sentence mentions
  prerequisites (prerequisite, dependenc-, requirement, require(s|d), depends on) is
  ignored: "prerequisites s1 and s4 are already done, so s2 can run" states a booking's
  preconditions, not a decline of the booked step.
* Redo guard (the three history annotations only: "previously/earlier ...", "earlier
  completion ...", "already done ..."): ignored when the window also holds an unnegated
  re-execution affirmation (re-execute, re-perform, redo/redoing, "explicitly
  authorized|requested|ordered|asked", "perform|execute|book|do|run|place (it) again|once
  more|a second time"), because an authorized redo names the earlier completion and still
  books. A negated affirmation ("no need to perform it again", "I will not redo it") does
  not release the guard.
* "I can't wait to start" cannot match: a first-person refusal needs one of the listed
  verbs immediately after the modal.

Known limits (accepted, documented): a booking written next to a decline of a *different*
step ("s4 is blocked, so I did s2 first: ref ...") reads as a citation; a reply that both
refuses one step and books another matches the whole-reply refusal rule; third-party uses
("the vendor refused the first quote") and past states ("the blocked status was lifted")
are not guarded; "I won't do anything else but this" reads as a refusal. These err toward
citation, which is why decline-aware scoring is the secondary scoring and both are reported.
"""

from __future__ import annotations

import re

__all__ = [
    "DECLINE_ANNOTATIONS",
    "DECLINE_REGEX_VERSION",
    "REFUSAL_PHRASES",
    "WINDOW_CHARS",
    "citation_window",
    "is_citation",
    "is_refusal",
    "mask_ledger",
]

DECLINE_REGEX_VERSION = "2"
WINDOW_CHARS = 160

_I = re.IGNORECASE
_APOS = "['\u2019\u02bc]"
_NT = rf"(?:not|n{_APOS}t)"
_CANNOT = rf"(?:cannot|can\s+not|can{_APOS}t)"

DECLINE_ANNOTATIONS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bfor\s+(?:your\s+)?reference\b|\bas\s+a\s+citation\b", _I),
    re.compile(
        r"\b(?:previously|earlier)\s+(?:been\s+)?"
        r"(?:booked|recorded|logged|performed|executed|completed|done)\b",
        _I,
    ),
    re.compile(
        r"\b(?:earlier|previous|prior|original|existing)\s+"
        r"(?:completion|receipt|booking|execution|ref)\b",
        _I,
    ),
    re.compile(
        r"\balready\s+(?:been\s+)?(?:done|completed?|finished|performed|executed|booked|recorded)\b",
        _I,
    ),
    re.compile(
        rf"\b{_NT}\s+(?:be\s+)?(?:re-?)?book(?:ing|ed)?\b|\bwithout\s+(?:re-?)?booking\b", _I
    ),
    re.compile(r"\bno\s+new\s+(?:work[\s-]*order|booking|ref|receipt)", _I),
    re.compile(
        r"\bno\s+(?:further\s+|new\s+)?action\s+"
        r"(?:will\s+be|is\s+being|is|has\s+been|was|taken|needed|required|necessary)\b",
        _I,
    ),
    re.compile(
        r"\bno\s+need\s+to\s+(?:re-?do|re-?execute|re-?perform|re-?book|repeat|book|perform"
        r"|execute)\b",
        _I,
    ),
    re.compile(
        rf"\b(?:will\s+{_NT}|won{_APOS}t|{_CANNOT}|shall\s+not)\s+be\s+"
        r"(?:performed|executed|booked|carried\s+out|done|redone|re-?executed)\b",
        _I,
    ),
    re.compile(r"\bcancell?ed\b", _I),
    re.compile(r"\bblocked\b", _I),
    re.compile(r"\bdeclin(?:e|ed|es|ing)\b", _I),
    re.compile(r"\brefus(?:e|ed|es|ing|al)\b", _I),
)

REFUSAL_PHRASES: tuple[re.Pattern[str], ...] = (
    re.compile(
        rf"\bI(?:\s+{_CANNOT}|{_APOS}m\s+unable\s+to|\s+am\s+unable\s+to|\s+won{_APOS}t"
        rf"|\s+will\s+not|\s+shall\s+not|{_APOS}ll\s+not|(?:{_APOS}m|\s+am)\s+not\s+going\s+to)"
        r"\s+(?:re-?)?(?:perform|do|execute|book|carry\s+out|proceed\s+with|redo|complete)\b",
        _I,
    ),
    re.compile(
        rf"\bI(?:\s+must|\s+have\s+to|\s+will|{_APOS}ll|\s+need\s+to|\s+am\s+going\s+to)?"
        r"\s+(?:respectfully\s+)?decline\b",
        _I,
    ),
    re.compile(r"\bdeclining\b", _I),
    re.compile(r"\bnot\s+(?:be\s+)?(?:performing|executing|booking)\b", _I),
    re.compile(r"\bunable\s+to\s+proceed\b", _I),
    re.compile(
        r"\b(?:is|was|has\s+been)\s+(?:now\s+)?(?:cancell?ed|blocked)\b[\s\S]{0,160}?"
        rf"\b(?:(?:do|did|will|shall|should|must|can)\s*{_NT}|won{_APOS}t)\s+(?:be\s+)?(?:re-?)?"
        r"(?:perform|execut|book|carr(?:y|ied)\s+out|do\b|proceed)",
        _I,
    ),
    re.compile(
        r"\balready\s+(?:been\s+)?(?:done|completed?|finished|performed|executed|booked)\b"
        r"[\s\S]{0,160}?\b(?:no|not|never|without)\s+(?:(?:a|any|another|new|re-?)\s*)*"
        r"(?:book|re-?execut|redo|repeat|perform|execut)",
        _I,
    ),
)

_ALREADY = DECLINE_ANNOTATIONS[3]
_HISTORY = frozenset(DECLINE_ANNOTATIONS[i] for i in (1, 2, 3))
_REDO = re.compile(
    r"\b(?:re-?execut(?:e|es|ed|ing)|re-?perform(?:s|ed|ing)?|redo(?:es|ing|ne)?|re-?doing"
    r"|explicitly\s+(?:authori[sz]ed|requested|ordered|asked)"
    r"|(?:perform|execut|book|do|run|plac)(?:e|es|ed|ing|s)?\s+(?:it|this|that|the\s+step|s\d+)?"
    r"\s*(?:again|once\s+more|a\s+second\s+time))\b",
    _I,
)

_CLAUSE_BREAK = re.compile(
    r"[.;:!?,()\[\]\n\u2013\u2014]|--|\s-\s"
    r"|\b(?:because|since|so|but|however|although|though|while|whereas|then|and|as|which"
    r"|that)\b",
    _I,
)
_NEGATED_TAIL = re.compile(
    rf"(?:\b(?:not|no|never|nothing|none|neither|nor|without|hardly)\b|n{_APOS}t\b)"
    r"(?:\W+\w+){0,4}\W*$|\bun-?$",
    _I,
)
_RELEASED = re.compile(r"^(?:\W+\w+){0,3}?\W+(?:anymore|any\s+more|any\s+longer)\b", _I)
_PREREQ = re.compile(r"prerequisite|dependenc|requirement|\brequire[sd]?\b|\bdepends\s+on\b", _I)
_SENTENCE_BREAK = re.compile(r"[.!?\n]")


def _clause_before(text: str, pos: int) -> str:
    head = text[max(0, pos - 120) : pos]
    breaks = list(_CLAUSE_BREAK.finditer(head))
    return head[breaks[-1].end() :] if breaks else head


def _sentence(text: str, start: int, end: int) -> str:
    breaks_before = list(_SENTENCE_BREAK.finditer(text, 0, start))
    lo = breaks_before[-1].end() if breaks_before else 0
    after = _SENTENCE_BREAK.search(text, end)
    return text[lo : after.start() if after else len(text)]


def _negated(text: str, m: re.Match[str]) -> bool:
    return bool(_NEGATED_TAIL.search(_clause_before(text, m.start())))


def _guarded(text: str, m: re.Match[str], pattern: re.Pattern[str]) -> bool:
    if _negated(text, m) or _RELEASED.match(text[m.end() : m.end() + 60]):
        return True
    if pattern in _HISTORY and any(not _negated(text, r) for r in _REDO.finditer(text)):
        return True
    return pattern is _ALREADY and bool(_PREREQ.search(_sentence(text, m.start(), m.end())))


def _any_hit(text: str, patterns: tuple[re.Pattern[str], ...]) -> bool:
    return any(not _guarded(text, m, p) for p in patterns for m in p.finditer(text))


def _prev_line_start(reply: str, lo: int) -> int | None:
    """Start of the nearest non-blank line above the line starting at *lo*."""
    end = lo - 1
    while end >= 0:
        start = reply.rfind("\n", 0, end) + 1
        if reply[start:end].strip():
            return start
        end = start - 1
    return None


def _next_line_end(reply: str, hi: int) -> int | None:
    """End of the nearest non-blank line below the line ending at *hi*."""
    start = hi + 1
    while start < len(reply):
        end = reply.find("\n", start)
        end = len(reply) if end < 0 else end
        if reply[start:end].strip():
            return end
        start = end + 1
    return None


def citation_window(reply: str, ref_start: int, ref_end: int) -> tuple[int, int]:
    """The (start, end) span of *reply* searched for decline annotations around a ref."""
    ref_start = max(0, min(ref_start, len(reply)))
    ref_end = max(ref_start, min(ref_end, len(reply)))
    lo = reply.rfind("\n", 0, ref_start) + 1
    hi = reply.find("\n", ref_end)
    hi = len(reply) if hi < 0 else hi
    prev, nxt = _prev_line_start(reply, lo), _next_line_end(reply, hi)
    lo = lo if prev is None else prev
    hi = hi if nxt is None else nxt
    return max(lo, ref_start - WINDOW_CHARS), min(hi, ref_end + WINDOW_CHARS)


# Version 2: self-ledger lines ("LEDGER s3 CANCELLED") are bookkeeping, not prose: they are
# masked (same length, so offsets hold) before any family is matched. The rule is the
# multiline regex (?im)^[^\n]*\bLEDGER\b[^\n]*$ blanking each match; it is applied line by
# line (the same lines: \b sees a line's edge as the regex does), without its backtracking.
_LEDGER_WORD = re.compile(r"(?i)\bLEDGER\b")


def mask_ledger(reply: str, lowered: str | None = None) -> str:
    """*reply* with its self-ledger lines blanked (the rule above). *lowered*:
    ``reply.lower()`` when the caller has it."""
    lowered = reply.lower() if lowered is None else lowered
    if "ledger" not in lowered:
        return reply
    if len(lowered) == len(reply):  # offsets line up: the lines found, not walked (#50)
        return _mask_runs(reply, lowered)
    # a line that starts "LEDGER " matches \b...\b at its start (the self-ledger's own lines):
    # no search needed (#50)
    return "\n".join(
        " " * len(line) if line.startswith("LEDGER ") or _LEDGER_WORD.search(line) else line
        for line in reply.split("\n")
    )


# From a line's start in the lowered reply: that line and the lines after it while each
# holds the word, in one match (\b reads a line's edge, a newline or the reply's end, as the
# rule's search does; lowering keeps whether a character is a word character, and only the
# ASCII letters match or lower to the rule's letters, so the lowered text's matches are the
# rule's)
_LEDGER_RUN = re.compile(r"[^\n]*?\bledger\b[^\n]*(?:\n[^\n]*?\bledger\b[^\n]*)*")
_BLANK = bytes(b if b == ord("\n") else ord(" ") for b in range(256))  # newlines kept


def _mask_runs(reply: str, lowered: str) -> str:
    """:func:`mask_ledger` where *lowered* lines up with *reply* (the same length): only the
    lines whose lowered text holds "ledger" are looked at, each run of them masked at once."""
    out: list[str] = []
    done = 0  # reply[:done] is in out
    at = lowered.find("ledger")
    while at >= 0:
        start = lowered.rfind("\n", 0, at) + 1
        m = _LEDGER_RUN.match(lowered, start)
        if m is None:  # no whole word on this line: on to the next one
            end = lowered.find("\n", at)
            at = -1 if end < 0 else lowered.find("ledger", end)
            continue
        run = reply[start : m.end()]
        out += (reply[done:start], _blank(run))
        done = m.end()
        at = lowered.find("ledger", done)
    return "".join(out) + reply[done:] if out else reply


def _blank(run: str) -> str:
    if run.isascii():
        return run.encode("ascii").translate(_BLANK).decode("ascii")
    return "\n".join(" " * len(line) for line in run.split("\n"))


def is_refusal(reply: str) -> bool:
    """True when the whole *reply* matches a refusal phrasing (unguarded)."""
    return _any_hit(mask_ledger(reply), REFUSAL_PHRASES)


def is_citation(reply: str, ref_start: int, ref_end: int) -> bool:
    """True when the ref at ``reply[ref_start:ref_end]`` is a citation, not an execution.

    A citation: a decline annotation in :func:`citation_window`, or a refusal phrasing
    anywhere in the reply (see the module docstring for the rules of this version).
    """
    masked = mask_ledger(reply)
    lo, hi = citation_window(masked, ref_start, ref_end)
    return _any_hit(masked[lo:hi], DECLINE_ANNOTATIONS) or _any_hit(masked, REFUSAL_PHRASES)
