"""The strings of the rules beyond one-shot state (issue #48; Section 6 names budgets, expiry,
conflicting obligations and several sessions as out of the paper's scope). OURS, all: the
paper has no wording for any of them; each is written in the register of Appendix B.1 and
argued in ``docs/protocol.md`` ("Budgets").

Budgets: the brief's clause and one line per budgeted step (after every other clause, so a
budgeted brief is its control's brief with lines added), the request the user sends for a
budgeted step again, what the checklist and the ledger show of a budget, the directive and
the rejection notice for a spent step, and the compile prompt's addition with its field.
Expiry and exclusive steps have the same parts (``docs/protocol.md``, "Expiry", "Exclusive
steps").

Sessions: the request for a handoff note at the end of a session, and the block that carries
the note into the next one.
"""

from __future__ import annotations

__all__ = [
    "BUDGET_CHECKLIST_SUFFIX",
    "BUDGET_CLAUSE",
    "BUDGET_COMPILE_PROMPT",
    "BUDGET_LINE",
    "BUDGET_REPEAT",
    "BUDGET_SPENT_STATUS",
    "DIRECTIVE_CLOSED",
    "DIRECTIVE_LAPSED",
    "DIRECTIVE_SPENT",
    "EXCLUSIVE_ALTERNATIVE",
    "EXCLUSIVE_ASK",
    "EXCLUSIVE_CHECKLIST_CLOSED",
    "EXCLUSIVE_CLAUSE",
    "EXCLUSIVE_CLOSED_STATUS",
    "EXCLUSIVE_COMPILE_PROMPT",
    "EXCLUSIVE_LINE",
    "EXPIRY_CLAUSE",
    "EXPIRY_COMPILE_PROMPT",
    "EXPIRY_LAPSED_STATUS",
    "EXPIRY_LAPSED_SUFFIX",
    "EXPIRY_LINE",
    "HANDOFF_CARRIED",
    "HANDOFF_NOTE_CHARS",
    "HANDOFF_REQUEST",
]

# --- Budgets (the budget knob; protocol.stress.budget) ----------------------------------------
# The brief: the clause overrides the one-shot sentence for the steps it lists, and only them.
BUDGET_CLAUSE = (
    "BUDGETS: the steps below may be performed more than once, up to the number of runs "
    "given for each. Each time I ask for such a step while runs remain, perform it again and "
    "book the new work order. Once all its runs are used, decline further requests for it."
)
BUDGET_LINE = "- {id}: up to {cap} runs in all"
# The user asks for a budgeted step again (every such request, within the budget or beyond,
# has the same words: counting the runs is the agent's task). No redo word: a budget run
# needs no authorization, and the matcher's explicit-redo reading stays false.
BUDGET_REPEAT = "Please run '{text}' once more, on work order {wo}."
# What the checklist adds to a budgeted step's DONE line.
BUDGET_CHECKLIST_SUFFIX = " ({used} of {cap} runs used)"
# The gates: a budgeted step with runs left gets the paper's ELIGIBLE directive (it is
# eligible); one whose runs are used up gets this one.
DIRECTIVE_SPENT = "[TASK-STATE] step {id} has used all its runs. Decline; do not perform it again."
# The rejection notice's status word for a spent step (strings.REJECTION's {status}).
BUDGET_SPENT_STATUS = "out of runs"
# Appended to the paper's compile prompt only when the brief has a BUDGETS clause: the paper's
# fields are untouched and a plain brief's compile request is byte for byte the paper's.
BUDGET_COMPILE_PROMPT = (
    'Also give "budgets": for each step listed under BUDGETS, its number of runs, e.g. '
    '"budgets": {"s3": 2} (an empty object if the plan has no BUDGETS list).'
)

# --- Expiry (the expiry knob; protocol.stress.expiry) -----------------------------------------
# The brief: a turn is one message of the user's; the clause says what a lapsed run asks for
# and leaves the paper's rule for a valid one (a finished step asked again is no redo order).
EXPIRY_CLAUSE = (
    "EXPIRY: a run of each step below stays valid for the number of my messages given. From "
    "that many messages after the message it was run on, the run has lapsed: when I ask for "
    "the step then, perform it again and book the new work order. While its run is valid, "
    "treat a request for it as for any finished step."
)
EXPIRY_LINE = "- {id}: a run stays valid for {turns} messages"
# The user asks for an expiring step again before and after the lapse with the budget's words
# (BUDGET_REPEAT): telling the two apart is the agent's task.
# What the checklist adds to a lapsed step's DONE line; the gates' directive for it; the
# rejection notice never names it (a lapsed step's booking is admitted).
EXPIRY_LAPSED_SUFFIX = " (its run has lapsed)"
DIRECTIVE_LAPSED = (
    "[TASK-STATE] step {id}'s last run has LAPSED. Perform it again now, booking the NEW work "
    "order."
)
EXPIRY_LAPSED_STATUS = "lapsed"
# Appended to the compile prompt only when the brief has an EXPIRY clause (as the budgets').
EXPIRY_COMPILE_PROMPT = (
    'Also give "expiry": for each step listed under EXPIRY, the number of messages a run '
    'stays valid, e.g. "expiry": {"s3": 8} (an empty object if the plan has no EXPIRY list).'
)

# --- Sessions (the sessions knob with handoff = "note"; protocol.stress.sessions) -----------
# Sent by the runner after the last turn of each session but the last, as the session's final
# user message: not a scored turn, and a reply to it books nothing (the runner reads no
# bookings from it). It names what a complete note holds and nothing of the episode.
HANDOFF_REQUEST = (
    "[SESSION END] This conversation ends after your reply; a new one will continue the task "
    "with the brief and a fresh transcript. Write a handoff note for it: every step you have "
    "performed (its completion code and work order), every step that was cancelled, and every "
    "change to the plan. Book nothing in this reply."
)
# How the note reaches the next session: the first user message of the session opens with
# this block (the note's blank lines closed up, the note bounded: HANDOFF_NOTE_CHARS).
HANDOFF_CARRIED = "[HANDOFF NOTE] Your note from the previous session:\n{note}"
HANDOFF_NOTE_CHARS = 8000  # the most characters of a note carried over (a bound, not a limit asked)
# --- Exclusive steps (the exclusive knob; protocol.stress.exclusive) --------------------------
# The alternative: a step the plan lists beside a planned one, "sign with vendor A or vendor B,
# never both". Its text is the planned step's with this ending; the plan never asks for it.
EXCLUSIVE_ALTERNATIVE = "{text} through the alternative provider instead"
# The brief: the clause after every other clause, one line per pair (the plan's own line for
# the alternative stands in the plan, with its completion code, like every step's).
EXCLUSIVE_CLAUSE = (
    "EXCLUSIVE STEPS: of each pair below, at most one step may be performed. Once one of "
    "them is done, the other is closed: decline any request for it and do not book it. If "
    "the done one is cancelled, the other is open again."
)
EXCLUSIVE_LINE = "- {a} or {b}: at most one of the two"
# The user asks for the alternative once its partner is done (every such request has these
# words; telling that it is closed is the agent's task). No redo word.
EXCLUSIVE_ASK = "Please {text}, on work order {wo}."
# What the checklist shows for a closed step (in place of its TODO line).
EXCLUSIVE_CHECKLIST_CLOSED = "- {id}: CLOSED ({other} is done; at most one of the two)"
# The gates' directive for a request of a closed step, and the rejection notice's status word.
DIRECTIVE_CLOSED = (
    "[TASK-STATE] step {id} is CLOSED: its alternative is done. Decline; do not perform it."
)
EXCLUSIVE_CLOSED_STATUS = "closed (its alternative is done)"
# Appended to the compile prompt only when the brief has an EXCLUSIVE STEPS clause.
EXCLUSIVE_COMPILE_PROMPT = (
    'Also give "exclusive": each pair listed under EXCLUSIVE STEPS as a two-element list of '
    'step ids, e.g. "exclusive": [["s3", "s11"]] (an empty list if the plan has no EXCLUSIVE '
    "STEPS list)."
)
