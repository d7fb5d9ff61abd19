"""Each arm's prompt policy: its system prompt, what the history keeps, the window (pure).

One function per prompt kind of the arm table (``ArmSpec.prompt``, :mod:`protocol.arms.table`)
says, for a cell's knobs, what the arm sends: the live sessions (``runner/arms``,
``runner/harness/play.py``) build their requests with it and the trap-turn probe
(:mod:`protocol.probe.history`) rebuilds the same requests from the logs with it, so these
rules are written once.

* ``text`` (raw, checklist): the brief (with the tools knob, the brief with each step's tool
  and the tool clause); the history keeps each user message as sent, except in replace mode
  (``checklist_mode="replace"``), where it keeps the plain message.
* ``ledger`` (self-ledger): the brief with the ledger clause; the history as for ``text``.
* ``gate`` (directive, enforce, hybrid): as ``text``, and the matched-step-line control
  (Appendix E.2, ``matched_step_line``) keeps the plain message too (it is the replace-mode
  checklist).
* ``memory`` (memory-topk, mem0; Appendix F): the brief; the history keeps the plain message
  (the recall block is shown on the current turn only), and in record mode only the last
  ``memory_window`` exchanges.

The tool harness (``harness="langgraph"``) sends its own brief (the tool clause in place of
the ref protocol) whatever the arm.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from protocol.arms.render import compose_user_message
from protocol.arms.table import arm_spec
from protocol.brief import render_brief, render_rules
from protocol.records import CellKey, Episode, Knobs
from protocol.registry import Registry

__all__ = ["POLICIES", "PolicyRule", "PromptPolicy", "keep", "policy", "system_prompt", "window"]

Messages = list[dict[str, str]]


class PromptPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """What one cell's arm sends, besides the turn's own shaping."""

    ledger: bool = False  # the brief carries the self-ledger's clause
    tools: bool = False  # the brief names each step's tool (the tools knob)
    harness: bool = False  # the tool harness's brief
    status: bool = False  # the harness's brief lists the status tool (tool_failure_landed)
    keeps_plain: bool = False  # the history keeps each user message without the addition
    window: int | None = None  # exchanges of the history sent (None: all of them)


def _text(knobs: Knobs) -> PromptPolicy:
    return PromptPolicy(tools=knobs.tools, keeps_plain=knobs.checklist_mode == "replace")


def _ledger(knobs: Knobs) -> PromptPolicy:
    return PromptPolicy(
        ledger=True, tools=knobs.tools, keeps_plain=knobs.checklist_mode == "replace"
    )


def _gate(knobs: Knobs) -> PromptPolicy:
    plain = knobs.checklist_mode == "replace" or knobs.matched_step_line
    return PromptPolicy(tools=knobs.tools, keeps_plain=plain)


def _memory(knobs: Knobs) -> PromptPolicy:
    window = knobs.memory_window if knobs.memory_mode == "record" else None
    return PromptPolicy(tools=knobs.tools, keeps_plain=True, window=window)


PolicyRule = Callable[[Knobs], PromptPolicy]

# Prompt kinds by name (``ArmSpec.prompt``); another package adds one through the
# ``state_ladder.policies`` entry points (docs/extending.md).
POLICIES: Registry[PolicyRule] = Registry("prompt policy", callable, group="state_ladder.policies")
for _kind, _rule in (("text", _text), ("ledger", _ledger), ("gate", _gate), ("memory", _memory)):
    POLICIES.add(_kind, _rule)


def policy(cell: CellKey) -> PromptPolicy:
    """The prompt policy of ``cell``'s arm on its knobs (an arm the table does not hold:
    the text arms')."""
    spec = arm_spec(cell.arm)
    found = POLICIES.get(spec.prompt if spec is not None else "text")(cell.knobs)
    if cell.knobs.harness != "text":
        status = cell.knobs.tool_failure_landed > 0
        return msgspec.structs.replace(found, harness=True, status=status)
    return found


def system_prompt(p: PromptPolicy, episode: Episode) -> str:
    """The system prompt ``p`` sends for ``episode`` (without a per-call directive)."""
    steps, brief = episode.steps, episode.spec.brief
    quoted = episode.spec.generator >= 5  # the clause on forwarded text (protocol.brief)
    rules = render_rules(episode.caps, episode.lapses, episode.pairs)  # issue #48: rules end it
    if p.harness:
        text = render_brief(steps, brief, harness=True, third_party=quoted, status=p.status)
    elif p.ledger:
        text = render_brief(steps, brief, ledger=True, tools=p.tools, third_party=quoted)
    elif p.tools:
        text = render_brief(steps, brief, tools=True, third_party=quoted)
    else:
        return episode.brief
    return text + rules


def keep(p: PromptPolicy, user_text: str, notices: Sequence[str], sent: str) -> str:
    """What the history keeps of a user message sent as ``sent``."""
    if p.keeps_plain:
        return compose_user_message(user_text, notices=list(notices))
    return sent


def window(p: PromptPolicy, history: Messages) -> Messages:
    """The earlier turns sent with a turn: the last ``p.window`` exchanges, or all."""
    if p.window is None:
        return history
    return history[-2 * p.window :] if p.window > 0 else []
