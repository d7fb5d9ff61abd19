"""Reading the brief (system prompt) as an LLM would: steps, codes, prerequisites, clauses."""

from __future__ import annotations

import re
from functools import lru_cache

import msgspec

from protocol import rule_strings, strings
from serve.agents.patterns import STEP_ID, template_regex

__all__ = ["BriefStep", "ParsedBrief", "parse_brief"]

_CODE = r"RC-\d{4}"
_DEPS = rf"{STEP_ID}(?:, {STEP_ID})*"
_SUFFIX = template_regex(strings.TOOL_STEP_SUFFIX, tool=r"[A-Za-z0-9_\-]+").pattern
_LINE_REQUIRES = re.compile(
    template_regex(strings.BRIEF_STEP_LINE_REQUIRES, id=STEP_ID, deps=_DEPS, code=_CODE).pattern
    + f"(?:{_SUFFIX})?$"
)
_LINE = re.compile(
    template_regex(strings.BRIEF_STEP_LINE, id=STEP_ID, code=_CODE).pattern + f"(?:{_SUFFIX})?$"
)
# a budgeted step's line under the BUDGETS clause (issue #48, OURS)
_BUDGET = template_regex(rule_strings.BUDGET_LINE, anchored=True, id=STEP_ID, cap=r"\d{1,3}")
_EXPIRY = template_regex(rule_strings.EXPIRY_LINE, anchored=True, id=STEP_ID, turns=r"\d{1,3}")
_PAIR = template_regex(rule_strings.EXCLUSIVE_LINE, anchored=True, a=STEP_ID, b=STEP_ID)


class BriefStep(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    text: str
    code: str
    deps: tuple[str, ...]
    tool: str | None = None


class ParsedBrief:
    """The plan as the brief states it, with lookup tables."""

    __slots__ = (
        "budgets",
        "by_code",
        "by_id",
        "by_text",
        "by_tool",
        "exclusive",
        "expiry",
        "ledger",
        "one_shot",
        "steps",
        "tools",
    )

    def __init__(
        self,
        steps: tuple[BriefStep, ...],
        *,
        one_shot: bool,
        tools: bool,
        ledger: bool,
        budgets: dict[str, int] | None = None,
        expiry: dict[str, int] | None = None,
        exclusive: dict[str, str] | None = None,
    ) -> None:
        self.steps = steps
        self.exclusive = exclusive or {}  # step -> its alternative (EXCLUSIVE STEPS, #48)
        self.expiry = expiry or {}  # step -> turns a run stays valid (the EXPIRY clause, #48)
        self.budgets = budgets or {}  # step -> its cap of runs (the BUDGETS clause, #48)
        self.one_shot = one_shot
        self.tools = tools
        self.ledger = ledger
        self.by_id = {s.id: s for s in steps}
        self.by_code = {s.code: s.id for s in steps}
        self.by_text = {s.text: s.id for s in steps}
        self.by_tool = {s.tool: s.id for s in steps if s.tool}

    @property
    def texts(self) -> dict[str, str]:
        """Step id -> brief text."""
        return {s.id: s.text for s in self.steps}

    @property
    def deps(self) -> dict[str, tuple[str, ...]]:
        return {s.id: s.deps for s in self.steps}


def _step(line: str) -> BriefStep | None:
    m = _LINE_REQUIRES.match(line) or _LINE.match(line)
    if m is None:
        return None
    groups = m.groupdict()
    deps = tuple(groups["deps"].split(", ")) if groups.get("deps") else ()
    return BriefStep(
        id=groups["id"], text=groups["text"], code=groups["code"], deps=deps, tool=groups["tool"]
    )


@lru_cache(maxsize=2048)
def parse_brief(text: str) -> ParsedBrief:
    """Every step line of ``text`` (in order of appearance) and which clauses it carries."""
    lines = text.splitlines()
    steps = tuple(s for s in map(_step, lines) if s is not None)
    return ParsedBrief(
        steps,
        one_shot=strings.ONE_SHOT in text,
        tools=strings.TOOL_CLAUSE in text,
        ledger=strings.LEDGER_CLAUSE in text,
        budgets=_listed(lines, rule_strings.BUDGET_CLAUSE, _BUDGET, "cap"),
        expiry=_listed(lines, rule_strings.EXPIRY_CLAUSE, _EXPIRY, "turns"),
        exclusive=_pairs(lines),
    )


def _listed(lines: list[str], clause: str, pattern: re.Pattern[str], field: str) -> dict[str, int]:
    """The numbers a rule's clause lists (issue #48), each step on its own line after it."""
    if clause not in lines:
        return {}
    after = lines[lines.index(clause) + 1 :]
    return {m["id"]: int(m[field]) for line in after if (m := pattern.match(line))}


def _pairs(lines: list[str]) -> dict[str, str]:
    """The pairs the EXCLUSIVE STEPS clause lists (issue #48), each on its own line after it."""
    if rule_strings.EXCLUSIVE_CLAUSE not in lines:
        return {}
    after = lines[lines.index(rule_strings.EXCLUSIVE_CLAUSE) + 1 :]
    return {m["a"]: m["b"] for line in after if (m := _PAIR.match(line))}
