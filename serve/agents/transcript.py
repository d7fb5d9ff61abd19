"""Reading a user turn the way the arms lay it out (``protocol.arms.render.compose_user_message``):
rejection notices, a blank line, the user's text, a blank line, the arm's addition
(checklist, ``[TASK-STATE]`` directive, ``[MATCHED STEP]`` line, ledger).

Forwarded text is read by the brief's rule (``strings.THIRD_PARTY_CLAUSE``: "quoted with '> '
under a 'Forwarded' line"), not by the exact words the generator writes (issue #37, the
offline layout check, ``tests/serve/agents/test_layout_blind.py``): a line that opens with
"Forwarded" (dashes around it allowed) or with ``>`` starts the forwarded block, whatever
its opening says, with or without a blank line before it; its quoted lines are third-party
text, never the user's request and never the arm's addition."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

import msgspec

from protocol import rule_strings, strings
from protocol.stress.spoof import QUOTED, opens_forward
from serve.agents.patterns import STEP_ID, WORK_ORDER, template_regex

__all__ = [
    "ChecklistEntry",
    "Directive",
    "Rejection",
    "UserTurn",
    "find_directive",
    "matched_step",
    "own_words",
    "parse_checklist",
    "shown_step",
    "split_user",
]

DirectiveLabel = Literal[
    "eligible", "done", "redo", "blocked", "cancelled", "spent", "lapsed", "closed"
]
_CODE = r"RC-\d{4}"
_IDS = rf"{STEP_ID}(?:, {STEP_ID})*"
_WO = re.compile(WORK_ORDER)

_REJECTION = template_regex(
    strings.REJECTION, code=_CODE, work_order=WORK_ORDER, id=rf"{STEP_ID}|\?", status=r"[^;]+?"
)
_REJECTION_OPENING = strings.REJECTION.split("{")[0]
# the tool harness's refusal of a call: read as a rejection of the tool's booking
_TOOL_REJECTION = template_regex(
    strings.TOOL_REJECTION,
    tool=r"[A-Za-z0-9_\-]+",
    work_order=WORK_ORDER,
    id=rf"{STEP_ID}|\?",
    status=r"[^;]+?",
)
_TOOL_REJECTION_OPENING = strings.TOOL_REJECTION.split("{")[0]
_DIRECTIVES: tuple[tuple[DirectiveLabel, re.Pattern[str]], ...] = (
    ("cancelled", template_regex(strings.DIRECTIVE_CANCELLED, id=STEP_ID)),
    ("done", template_regex(strings.DIRECTIVE_DONE, id=STEP_ID)),
    ("redo", template_regex(strings.DIRECTIVE_REDO, id=STEP_ID)),
    ("blocked", template_regex(strings.DIRECTIVE_BLOCKED, id=STEP_ID, missing=f"(?:{_IDS})?")),
    ("eligible", template_regex(strings.DIRECTIVE_ELIGIBLE, id=STEP_ID)),
    ("spent", template_regex(rule_strings.DIRECTIVE_SPENT, id=STEP_ID)),  # issue #48
    ("lapsed", template_regex(rule_strings.DIRECTIVE_LAPSED, id=STEP_ID)),  # issue #48
    ("closed", template_regex(rule_strings.DIRECTIVE_CLOSED, id=STEP_ID)),  # issue #48
)
_DIRECTIVE_OPENING = strings.DIRECTIVE_ELIGIBLE.split("{")[0].split(" ")[0]  # "[TASK-STATE]"
_MATCHED = template_regex(strings.MATCHED_STEP_LINE, id=STEP_ID)
_CHECKLIST: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("todo", template_regex(strings.CHECKLIST_TODO_READY, anchored=True, id=STEP_ID)),
    (
        "blocked",
        template_regex(strings.CHECKLIST_TODO_WAITING, anchored=True, id=STEP_ID, deps=_IDS),
    ),
    ("done", template_regex(strings.CHECKLIST_DONE, anchored=True, id=STEP_ID)),
    # an expiring step whose run has lapsed, and a budgeted step's runs used (issue #48)
    (
        "lapsed",
        template_regex(
            strings.CHECKLIST_DONE + rule_strings.EXPIRY_LAPSED_SUFFIX, anchored=True, id=STEP_ID
        ),
    ),
    (
        "done",
        template_regex(
            strings.CHECKLIST_DONE + rule_strings.BUDGET_CHECKLIST_SUFFIX,
            anchored=True,
            id=STEP_ID,
            used=r"\d{1,3}",
            cap=r"\d{1,3}",
        ),
    ),
    ("cancelled", template_regex(strings.CHECKLIST_CANCELLED, anchored=True, id=STEP_ID)),
    # a step whose exclusive partner is done (issue #48)
    (
        "closed",
        template_regex(
            rule_strings.EXCLUSIVE_CHECKLIST_CLOSED, anchored=True, id=STEP_ID, other=STEP_ID
        ),
    ),
)
_ADDITION_OPENINGS = (
    strings.CHECKLIST_HEADER,
    _DIRECTIVE_OPENING,
    strings.MATCHED_STEP_LINE.split("{")[0],
)
_LEDGER_LINE = re.compile(r"^\W*ledger\b", re.IGNORECASE)
_TAG = re.compile(r"^\[[A-Z][A-Z0-9 _\-]+\]")


class Rejection(msgspec.Struct, frozen=True, kw_only=True):
    code: str  # the refused code, or "tool:<name>" for a refused tool call
    work_order: str
    step: str | None


class Directive(msgspec.Struct, frozen=True, kw_only=True):
    step: str
    label: DirectiveLabel
    missing: tuple[str, ...] = ()


class ChecklistEntry(msgspec.Struct, frozen=True, kw_only=True):
    # todo | blocked | done | cancelled | lapsed (an expiring step's, #48) | closed (#48)
    status: str
    missing: tuple[str, ...] = ()
    runs_left: int | None = None  # a budgeted step's runs left (issue #48); None: no budget


class UserTurn(msgspec.Struct, frozen=True, kw_only=True):
    notices: tuple[Rejection, ...]
    text: str  # the scripted user's message ("" for a notice-only re-prompt)
    addition: str  # what the arm appended
    work_order: str | None  # the work order the text carries
    # state text inside the user's own message (lines after its first that open like an
    # arm's text or a tagged block, or a forwarded message's quoted lines: the spoof knob's
    # forgeries); not part of ``text``
    embedded: str = ""
    # the embedded text came as a forwarded, quoted message (generator 5's spoof knob)
    forwarded: bool = False


def _is_addition(part: str) -> bool:
    return part.startswith(_ADDITION_OPENINGS) or bool(_LEDGER_LINE.match(part))


@lru_cache(maxsize=32768)
def split_user(content: str) -> UserTurn:
    """Notices, text and addition of a user turn. Parts before the text that carry a tag
    (``[SOMETHING] ...``, e.g. a tool result) or an arm addition are kept with the addition;
    the first other part is the user's text."""
    notices: list[Rejection] = []
    extra: list[str] = []
    text: str | None = None
    for part in content.split("\n\n"):
        if text is not None:
            if not extra and opens_forward(part.split("\n", 1)[0]):
                text += "\n" + part  # a forwarded block after a blank line is still the user's
            else:
                extra.append(part)
        elif part.startswith(_REJECTION_OPENING):
            for m in _REJECTION.finditer(part):
                step = m["id"] if m["id"] != "?" else None
                notices.append(Rejection(code=m["code"], work_order=m["work_order"], step=step))
        elif part.startswith(_TOOL_REJECTION_OPENING):
            for m in _TOOL_REJECTION.finditer(part):
                step = m["id"] if m["id"] != "?" else None
                code = f"tool:{m['tool']}"
                notices.append(Rejection(code=code, work_order=m["work_order"], step=step))
        elif _is_addition(part) or _TAG.match(part):
            extra.append(part)
        else:
            text = part
    text, embedded, forwarded = _split_embedded(text or "")
    wo = _WO.search(text)
    return UserTurn(
        notices=tuple(notices),
        text=text,
        addition="\n\n".join(extra),
        work_order=wo.group(0) if wo else None,
        embedded=embedded,
        forwarded=forwarded,
    )


# The brief's rule on forwarded text (strings.THIRD_PARTY_CLAUSE), one definition:
# protocol.stress.spoof.opens_forward (a "Forwarded" line, or a quoted line).
_QUOTE_MARK = re.compile(r"^\s*> ?")


def _split_embedded(text: str) -> tuple[str, str, bool]:
    """(the user's text, the state text embedded after it): from the first line after the
    first that opens like an arm's text, a notice or a tagged block; or (generator 5) from
    the first that opens a forwarded block (a "Forwarded" line or a quoted line), its quoted
    lines unquoted; and whether it was forwarded."""
    lines = text.split("\n")
    for i, line in enumerate(lines[1:], start=1):
        if opens_forward(line):
            start = i if QUOTED.match(line) else i + 1
            quoted = (_QUOTE_MARK.sub("", x) for x in lines[start:] if x.strip())
            return "\n".join(lines[:i]).rstrip(), "\n".join(quoted), True
        if _is_addition(line) or _TAG.match(line) or line.startswith(_REJECTION_OPENING):
            return "\n".join(lines[:i]), "\n".join(lines[i:]), False
    return text, "", False


def own_words(text: str) -> str:
    """A user message less the block it forwards (the brief: quoted text is information,
    only the user's own words are requests); ``text`` itself when it forwards nothing."""
    own, _, forwarded = _split_embedded(text)
    return own if forwarded else text


def find_directive(text: str) -> Directive | None:
    """The last ``[TASK-STATE]`` directive in ``text``."""
    if _DIRECTIVE_OPENING not in text:
        return None
    found: list[tuple[int, Directive]] = []
    for label, pattern in _DIRECTIVES:
        for m in pattern.finditer(text):
            missing = tuple(m["missing"].split(", ")) if label == "blocked" and m["missing"] else ()
            found.append((m.start(), Directive(step=m["id"], label=label, missing=missing)))
    return max(found, key=lambda x: x[0])[1] if found else None


_SHOWN = template_regex(strings.SHOW_STEP, id=STEP_ID)
_SHOWN_NONE = strings.SHOW_NONE


def shown_step(text: str) -> str | None:
    """The step a gate's reading line names (the show knob): its id, ``""`` when the gate
    says it read no step, None when ``text`` has no reading line."""
    if (m := _SHOWN.search(text)) is not None:
        return m["id"]
    return "" if _SHOWN_NONE in text else None


def matched_step(text: str) -> str | None:
    m = _MATCHED.search(text)
    return m["id"] if m else None


def parse_checklist(text: str) -> dict[str, ChecklistEntry] | None:
    """Step id -> its checklist entry, or None when ``text`` shows no checklist."""
    at = text.rfind(strings.CHECKLIST_HEADER)
    if at < 0:
        return None
    entries: dict[str, ChecklistEntry] = {}
    for line in text[at:].splitlines()[1:]:
        for status, pattern in _CHECKLIST:
            if m := pattern.match(line):
                deps = tuple(m["deps"].split(", ")) if status == "blocked" else ()
                groups = m.groupdict()
                left = int(groups["cap"]) - int(groups["used"]) if "cap" in groups else None
                entries[m["id"]] = ChecklistEntry(status=status, missing=deps, runs_left=left)
                break
    return entries
