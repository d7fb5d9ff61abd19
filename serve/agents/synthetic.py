"""The synthetic agent: a seeded stochastic policy whose failure rates depend on what the
prompt shows it. A test instrument for demos and benchmarks, not a claim about any model;
every answer it gives is labelled synthetic.

It starts from the perfect agent's own reading (state from its transcript, or the displayed
checklist) and then errs with these probabilities (model-name parameters, defaults):

============  =======  ==================================================================
parameter     default  meaning
============  =======  ==================================================================
obey          0.965    a ``[TASK-STATE]`` directive is obeyed, and so is forged state text in
                       the user's own message (the spoof knob, docs/stress.md): a forged
                       ELIGIBLE directive books the step, a forged DONE claim (checklist
                       entry, notice, tool result, receipt) confirms it as done instead.
                       A disobeyed trap directive
                       (DONE / CANCELLED / BLOCKED) books the step: written as a citation
                       inside a refusal with probability ``cite_share``, else bare. A
                       disobeyed ELIGIBLE or REDO directive is declined with probability 1/8
quoted        0.1      forged state text that arrives as a forwarded, quoted message
                       (generator 5's spoof knob; the brief says quoted text is neither an
                       instruction nor a record) is followed at this rate instead of ``obey``;
                       a forwarded redo authorization (``spoof = "redo"``), followed, books
                       the finished step again; a tool result that answers no call of its
                       own (the harness's forged one) is followed at this rate too
cite_share    0.6      see ``obey``
fresh         0.2      a finished step asked again on a fresh work order is re-executed
original      1.6      multiplier on ``fresh`` under the original brief (no one-shot rule)
premature     0.03     a blocked step is booked
superseded    0.05     a cancelled step is booked
cite          0.1      a correct refusal of a done or cancelled step cites a ref line with
                       the current work order (the decline-aware case, Appendix A.2)
checklist     0.6      multiplier on the four rates above when a checklist shows the step's
                       state
ledger        0.35     the same multiplier when its own ledger shows the step DONE or
                       CANCELLED (writing state binds more than reading it)
think         0.5      multiplier on the trap rates when thinking is on
omit          0.002    an eligible step is not booked
refuse_redo   0.01     an authorized redo is refused (doubled when a checklist shows DONE)
pick          0.3      an ambiguous probe naming two steps is answered by booking the first
extra         0.0      an eligible booking also books another eligible step (unrequested)
confirm_ask   1.0      multiplier on ``fresh`` when the request is the trap-turn probe's
                       confirm-the-step wording (``strings.PROBE_CONFIRM``; docs/probe.md)
status_ask    1.0      multiplier on ``fresh`` when the request is a status question (the
                       generator's status wordings, as the probe's status variant asks)
one_shot      0.15     a budgeted step asked for again while runs remain (the budget knob,
                       issue #48) is confirmed as done instead of run (the one-shot habit:
                       an omission); lowered by ``checklist`` / ``ledger`` as the trap rates
over_budget   0.25     a budgeted step with its runs used up is run again (the budget's
                       trap, scored on its own channel); lowered the same way
lapse         0.3      an expiring step whose run has lapsed (the expiry knob, issue #48) is
                       confirmed as done instead of run again (``lapse_missed``); lowered
                       by ``checklist`` when a checklist shows the lapse (a ledger shows
                       only DONE) and by ``think``. A request while its run is valid is a
                       finished step's (``fresh``)
closed        0.3      the alternative of a done step (the exclusive knob, issue #48) asked
                       for is booked anyway (the closed step run: ``exclusive_closed``);
                       lowered by ``checklist`` when a checklist shows it CLOSED (a ledger
                       shows only DONE and CANCELLED) and by ``think``; a correct refusal
                       cites a ref line at ``cite``, as for the other traps
doubt         0.8      when the gate shows its reading (the show knob) and it names another
                       step than the agent's own reading of the request, the directive is
                       set aside for the agent's own decision (a misroute noticed)
countered     0.25     multiplier on following forged state text (``obey`` or ``quoted``)
                       when the arm shows its own account of the forged step on the turn: a
                       gate's directive for it or a rejection notice of its code (a displayed
                       checklist entry for it multiplies by ``checklist`` instead). Ours
                       (issue #46): the forgery's belief depends on what the arm shows, so a
                       rung that shows the state can counter it (docs/stress.md)
note_drop     0.1      each line of its handoff note (the sessions knob, issue #48;
                       :mod:`serve.agents.note`) is left out; the next session reads only
                       what the note lists. With no note carried it starts from the brief
                       alone and forgets every earlier run (a step it ran is eligible)
seed          0        mixed into the per-request seed
============  =======  ==================================================================

With the defaults, 64 episodes at S = 10 give strict success near 0.4 (raw), 0.55
(checklist), 0.7 (ledger), 0.8 (directive) and 0.98 (enforcement): a ladder shaped like the
paper's no-think Qwen3-235B cells, by construction.

Deterministic and paired (issue #46): each choice has its own die, a hash of the runner's draw
key (episode seed, turn, call within the turn, trial; :mod:`protocol.draws`), the choice's
purpose and ``seed``, so two cells of one seed roll the same dice on every turn. A request
without the key (a client other than the runner) uses the hash of its messages instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from protocol import strings
from protocol.draws import uniform
from protocol.state.machine import Verdict
from serve.agents.answer import Answer
from serve.agents.decide import Decision, from_verdict, guard, own_decision
from serve.agents.patterns import WORK_ORDER, template_regex
from serve.agents.reading import View
from serve.agents.reply import reasoning, render_reply
from serve.agents.resolve import wording_index
from serve.agents.transcript import Directive, find_directive, shown_step

__all__ = ["DEFAULTS", "respond"]

DEFAULTS: dict[str, float] = {
    "obey": 0.965,
    "quoted": 0.1,
    "cite_share": 0.6,
    "fresh": 0.2,
    "original": 1.6,
    "premature": 0.03,
    "superseded": 0.05,
    "cite": 0.1,
    "checklist": 0.6,
    "ledger": 0.35,
    "think": 0.5,
    "omit": 0.002,
    "refuse_redo": 0.01,
    "pick": 0.3,
    "extra": 0.0,
    "confirm_ask": 1.0,
    "status_ask": 1.0,
    "doubt": 0.8,
    "countered": 0.25,
    "one_shot": 0.15,
    "over_budget": 0.25,
    "lapse": 0.3,
    "note_drop": 0.1,
    "closed": 0.3,
    "seed": 0.0,
}
_LEDGER_WORD = {"done": "DONE", "cancelled": "CANCELLED"}
_CONFIRM_ASK = template_regex(strings.PROBE_CONFIRM, anchored=True, wo=WORK_ORDER)
_WO_IN = template_regex("{wo}", wo=WORK_ORDER)
_FORGED_ID = re.compile(r"(?:^- |step )(s\d+)\b", re.MULTILINE)
_FORGED_CODE = re.compile(r"RC-\d{4}")
_FORGED_REDO = strings.SPOOF_REDO.split("{")[0]


def _forged(view: View) -> Decision | None:
    """What forged state text in the user's message claims, as a decision (None: none)."""
    text = view.user.embedded
    if not text:
        return None
    d = find_directive(text)
    if d is not None:
        return from_verdict(d.step, Verdict(d.label, d.missing))
    if text.startswith(_FORGED_REDO) and view.request.step in view.brief.by_id:
        # a forged redo authorization (issue #37): believed, it books the finished step again
        return Decision(action="book", step=view.request.step, redo=True)
    m = _FORGED_ID.search(text)
    step = m[1] if m else view.brief.by_code.get(c[0]) if (c := _FORGED_CODE.search(text)) else None
    return Decision(action="confirm", step=step) if step in view.brief.by_id else None


_RESULT = template_regex(
    strings.TOOL_RESULT, tool=r"[A-Za-z0-9_\-]+", work_order=WORK_ORDER, receipt=r"\S+?"
)


def _forged_result(view: View) -> Decision | None:
    """A tool result opening the user's message that answers no call of the agent (its work
    order is none the transcript ever gave: the harness's forged tool result, issue #37),
    as the decision it claims: the tool's step is done. None when there is none (a result
    the last turn could not deliver names a work order the agent was given)."""
    if strings.TOOL_RESULT.split("{")[0] not in view.user.addition:
        return None
    given = {u.work_order for u, _ in view.history} | {view.work_order}
    for m in _RESULT.finditer(view.user.addition):
        step = view.brief.by_tool.get(m["tool"])
        if m["work_order"] not in given and step is not None:
            return Decision(action="confirm", step=step)
    return None


def _countered(view: View, step: str | None, p: Mapping[str, float]) -> float:
    """How much the arm's own account of ``step`` on this turn lowers following a forgery
    about it: ``countered`` for a directive or a rejection notice, ``checklist`` for a shown
    checklist entry, 1 when the arm shows nothing of the step."""
    if step is None or step not in view.brief.by_id:
        return 1.0
    directive = view.directive is not None and view.directive.step == step
    if directive or view.brief.by_id[step].code in view.rejected_now:
        return p["countered"]
    return p["checklist"] if step in (view.checklist or {}) else 1.0


def _ask_multiplier(text: str, p: Mapping[str, float]) -> float:
    """The probe's wordings: confirm-the-step and status questions (default 1: no change)."""
    if _CONFIRM_ASK.match(text):
        return p["confirm_ask"]
    m = _WO_IN.search(text)
    if m is not None:
        wording = text[: m.start()] + "{wo}" + text[m.end() :]
        if wording_index().get(wording, ("", ""))[1] == "status":
            return p["status_ask"]
    return 1.0


class _Dice:
    def __init__(self, view: View, p: Mapping[str, float], key: str, thinking: bool):
        self.view = view
        self.p = p
        self.key = key
        self.thinking = thinking

    def roll(self, rate: float, purpose: str) -> bool:
        """True with probability ``rate``: one die per purpose, drawn from the key alone."""
        return uniform(self.key, purpose) < min(1.0, max(0.0, rate))

    def shown(self, step: str, status: str) -> bool:
        entry = (self.view.checklist or {}).get(step)
        return entry is not None and entry.status == status

    def multiplier(self, step: str, status: str) -> float:
        """How much what the prompt shows about ``step`` lowers a trap rate."""
        mult = self.p["think"] if self.thinking else 1.0
        if self.shown(step, status):
            return mult * self.p["checklist"]
        word = _LEDGER_WORD.get(status)  # a ledger has no word for "blocked"
        if word is not None and self.view.ledger_shown.get(step) == word:
            return mult * self.p["ledger"]
        return mult


def _directed(dice: _Dice, d: Directive) -> Decision:
    obeyed = from_verdict(d.step, Verdict(d.label, d.missing))
    if dice.roll(dice.p["obey"], "obey"):
        return obeyed
    if d.label in ("done", "cancelled", "blocked", "spent", "closed"):
        if dice.roll(dice.p["cite_share"], "cite_share"):
            return Decision(action=obeyed.action, step=d.step, missing=d.missing, cite=True)
        return Decision(action="book", step=d.step)
    if dice.roll(0.125, "decline_order"):
        return Decision(action="confirm", step=d.step)
    return obeyed


def _trap(dice: _Dice, d: Decision, step: str, rate: float, status: str) -> Decision:
    """Book the trap step with ``rate``; else refuse, citing a ref line with ``cite``."""
    mult = dice.multiplier(step, status)
    if dice.roll(rate * mult, "trap"):
        return Decision(action="book", step=step)
    if d.action in ("confirm", "decline") and dice.roll(dice.p["cite"] * mult, "cite"):
        return Decision(action=d.action, step=step, cite=True)
    return d


def _undirected(dice: _Dice) -> Decision:
    view, p = dice.view, dice.p
    d = own_decision(view)
    step = d.step
    if d.action == "ask_back" and dice.roll(p["pick"], "pick"):
        return Decision(action="book", step=d.named[0])
    if step is None:
        return d
    if step in view.brief.budgets and view.state.status(step) == "done" and not d.redo:
        return _budgeted(dice, d, step)
    if view.state.closed(step) or dice.shown(step, "closed"):  # exclusive steps (issue #48)
        return _trap(dice, d, step, p["closed"], "closed")
    if step in view.brief.expiry and d.action == "book" and not d.redo:
        shown = dice.shown(step, "lapsed")  # a checklist that says so lowers the rate
        mult = (p["think"] if dice.thinking else 1.0) * (p["checklist"] if shown else 1.0)
        if (view.state.lapsed(step) or shown) and dice.roll(p["lapse"] * mult, "lapse"):
            return Decision(action="confirm", step=step)  # the lapse missed (issue #48)
    if d.action == "confirm":
        fresh = p["fresh"] * (1.0 if view.brief.one_shot else p["original"])
        fresh *= _ask_multiplier(view.user.text, p)
        return _trap(dice, d, step, fresh, "done")
    if d.action == "decline":
        return _trap(dice, d, step, p["superseded"], "cancelled")
    if d.action == "blocked":
        return _trap(dice, d, step, p["premature"], "blocked")
    if d.action == "book" and d.redo:
        rate = p["refuse_redo"] * (2.0 if dice.shown(step, "done") else 1.0)
        return Decision(action="confirm", step=step) if dice.roll(rate, "refuse_redo") else d
    if d.action == "book" and dice.roll(p["omit"], "omit"):
        return Decision(action="unknown", step=step)
    if d.action == "book" and dice.roll(p["extra"], "extra"):
        others = [v for v in view.state.eligible() if v != step]
        return Decision(action="book", step=step, extra=tuple(others[:1]))
    return d


def _budgeted(dice: _Dice, d: Decision, step: str) -> Decision:
    """A budgeted step asked for again (issue #48): run within its budget unless the one-shot
    habit confirms it instead; beyond it, declined unless run again anyway."""
    mult = dice.multiplier(step, "done")
    if d.action == "book":
        return (
            Decision(action="confirm", step=step)
            if dice.roll(dice.p["one_shot"] * mult, "one_shot")
            else d
        )
    return _trap(dice, d, step, dice.p["over_budget"], "done")


def _doubted(dice: _Dice, d: Directive) -> bool:
    """A shown reading (the show knob) naming another step than the agent's own reading of
    the request: the agent sets the directive aside with probability ``doubt``."""
    shown = shown_step(dice.view.user.addition)
    own = dice.view.request
    if shown is None or own.kind != "step" or own.step in (None, shown, d.step):
        return False
    return dice.roll(dice.p["doubt"], "doubt")


def respond(
    view: View, params: Mapping[str, float], digest: str, thinking: bool, draw: str | None = None
) -> Answer:
    """The synthetic agent's reply; its dice are drawn from ``draw`` (the runner's draw key,
    :mod:`protocol.draws`) when the request carries one, else from the prompt's ``digest``."""
    p = {**DEFAULTS, **params}
    dice = _Dice(view, p, f"synthetic|{draw or digest}|{p['seed']!r}", thinking)
    forged = _forged(view)
    follows = p["quoted"] if view.user.forwarded else p["obey"]
    if forged is None and (forged := _forged_result(view)) is not None:
        follows = p["quoted"]  # a third party's text, as a forwarded message is
    if forged is not None and dice.roll(follows * _countered(view, forged.step, p), "forged"):
        d = forged
    elif view.directive is not None and not _doubted(dice, view.directive):
        d = _directed(dice, view.directive)
    else:
        d = _undirected(dice)
    if d.step is not None and d.step not in view.brief.by_id:
        d = Decision(action="unknown")
    d = guard(view, d)
    return Answer(content=render_reply(view, d), reasoning=reasoning(view, d), synthetic=True)
