"""Rendering the brief (system prompt) and the revision message from the protocol strings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocol import rule_strings, strings
from protocol.records import Step

__all__ = [
    "render_brief",
    "render_budgets",
    "render_exclusive",
    "render_expiry",
    "render_revision",
    "render_rules",
    "tool_name",
]


def tool_name(step: Step) -> str:
    """The tools variant's tool for a step: its template slug, snake-cased."""
    return step.slug.replace("-", "_")


def render_brief(
    steps: Sequence[Step],
    brief: str,
    *,
    ledger: bool = False,
    tools: bool = False,
    harness: bool = False,
    third_party: bool = False,
    status: bool = False,
) -> str:
    """The system prompt: plan, policy, (one-shot sentence), execution protocol, clauses.

    ``brief`` is ``"amended"`` (the one-shot sentence between the policy paragraph and the
    execution protocol, Appendix B.1) or ``"original"``. ``harness`` is the real-tool
    harness's brief (Appendix G): every step line names its tool and the tool clause stands
    where the ref execution protocol stands (the protocol is not sent). ``third_party``
    (generator 5 on) ends it with the clause on forwarded text (``THIRD_PARTY_CLAUSE``, OURS).
    ``status`` (the harness's ``tool_failure_landed`` knob) lists the read-only status tool
    after the tool clause (``STATUS_CLAUSE``, OURS).
    """
    tools = tools or harness
    lines = [strings.BRIEF_OPENING]
    for s in steps:
        fmt = strings.BRIEF_STEP_LINE_REQUIRES if s.deps else strings.BRIEF_STEP_LINE
        line = fmt.format(id=s.id, text=s.text, code=s.code, deps=", ".join(s.deps))
        if tools:
            line += strings.TOOL_STEP_SUFFIX.format(tool=tool_name(s))
        lines.append(line)
    lines.append(strings.BRIEF_POLICY)
    if brief == "amended":
        lines.append(strings.ONE_SHOT)
    if not harness:
        lines.append(strings.BRIEF_EXECUTION_PROTOCOL)
    if tools:
        lines.append(strings.TOOL_CLAUSE)
    if harness and status:
        lines.append(strings.STATUS_CLAUSE)
    if ledger:
        lines.append(strings.LEDGER_CLAUSE)
    if third_party:
        lines.append(strings.THIRD_PARTY_CLAUSE)
    return "\n".join(lines)


def render_budgets(caps: Mapping[str, int]) -> str:
    """The brief's budget clause and one line per budgeted step (issue #48, OURS), or "" when
    no step has a budget; it ends the brief, after every other clause."""
    if not caps:
        return ""
    lines = [rule_strings.BUDGET_CLAUSE]
    lines += [rule_strings.BUDGET_LINE.format(id=v, cap=caps[v]) for v in caps]
    return "\n" + "\n".join(lines)


def render_expiry(lapses: Mapping[str, int]) -> str:
    """The brief's expiry clause and one line per expiring step (issue #48, OURS), or ""."""
    if not lapses:
        return ""
    lines = [rule_strings.EXPIRY_CLAUSE]
    lines += [rule_strings.EXPIRY_LINE.format(id=v, turns=lapses[v]) for v in lapses]
    return "\n" + "\n".join(lines)


def render_exclusive(pairs: Mapping[str, str]) -> str:
    """The brief's exclusive-steps clause and one line per pair (issue #48, OURS), or ""."""
    if not pairs:
        return ""
    lines = [rule_strings.EXCLUSIVE_CLAUSE]
    lines += [rule_strings.EXCLUSIVE_LINE.format(a=a, b=b) for a, b in pairs.items()]
    return "\n" + "\n".join(lines)


def render_rules(
    caps: Mapping[str, int], lapses: Mapping[str, int], pairs: Mapping[str, str] | None = None
) -> str:
    """Every rule clause an episode's brief ends with (issue #48)."""
    return render_budgets(caps) + render_expiry(lapses) + render_exclusive(pairs or {})


def render_revision(
    texts: Mapping[str, str],
    cancel: str,
    rewires: Mapping[str, Sequence[str]],
    relax: tuple[str, str] | None,
) -> str:
    """The revision message: the cancellation, each rewired step's full remaining
    prerequisites, and the relaxed prerequisite. ``texts`` maps step id -> brief text."""
    parts = [strings.REVISION_CANCEL.format(text=texts[cancel])]
    for w, deps in rewires.items():
        if deps:
            named = ", ".join(f"'{texts[u]}'" for u in deps)
            parts.append(strings.REVISION_REWIRE.format(text=texts[w], deps=named))
        else:
            parts.append(strings.REVISION_REWIRE_NONE.format(text=texts[w]))
    if relax is not None:
        parts.append(strings.REVISION_RELAX.format(text=texts[relax[0]], dropped=texts[relax[1]]))
    return " ".join(parts)
