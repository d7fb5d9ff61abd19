"""What one logged tool-harness turn executed (cells with ``knobs.harness == "langgraph"``).

The harness's executions are its tool calls that stamped the workspace: the scorer reads
them from the logged calls (``TurnRecord.tool_calls``) and their receipts (the stamps), and
checks each against the logged text, so the same state machine and channels score it
(:mod:`scoring.replay.episode_score`). A logged call counts as an execution when

* its outcome is ``executed`` and it carries a receipt that is a stamp of its tool for its
  work order (``<tool>/<nnnn>-<work order digits>.stamp``, :mod:`runner.harness.workspace`);
* the reply that made it (``reply`` 0, or the follow-up it names) holds that ACTION line;
* its work order is the turn's, and its tool is a step's tool in the regenerated episode
  (the step is taken from the episode, not from the log).

A timeout whose write landed (outcome ``failed``, status ``landed``: the tool_failure_landed
knob) is an execution too, under the same three conditions: the workspace holds its stamp.
A step's other writes in the same turn after a landed one (a retry the gate let through, or a
second landed timeout) are duplicate writes: the step appears once more in the turn's
executions per extra write, and the replay counts each as a re-execution
(:meth:`protocol.user.ScriptedUser.finish`). Logs without landed calls read as before.

Otherwise one execution per step per turn; a refused call never executes; ACTION lines are acts, so
the decline-aware scoring is the primary one; ``repeat`` and ``stale`` calls execute nothing
(stale ones are counted as re-displays, calls of tools not in the plan as unknown).
"""

from __future__ import annotations

from protocol.brief import tool_name
from protocol.records import Episode, ToolCall, TurnRecord
from protocol.state.receipts import find_actions, normalize_work_order
from scoring.replay.bookings import TurnBookings

__all__ = ["ToolTable", "read_harness_turn"]


class ToolTable:
    """An episode's tool name -> (step id, completion code)."""

    __slots__ = ("tools",)

    def __init__(self, episode: Episode) -> None:
        self.tools = {tool_name(s): (s.id, s.code) for s in episode.steps}


def _in_reply(call: ToolCall, texts: list[str]) -> bool:
    if not 0 <= call.reply < len(texts):
        return False
    return any(
        a.tool == call.tool and normalize_work_order(a.work_order) == call.work_order
        for a in find_actions(texts[call.reply])
    )


def _stamped(call: ToolCall) -> bool:
    r = call.receipt
    digits = call.work_order.lstrip("#")
    return r is not None and r.startswith(f"{call.tool}/") and r.endswith(f"-{digits}.stamp")


def _counts(call: ToolCall, turn: TurnRecord, texts: list[str]) -> bool:
    """Whether ``call`` wrote its step in the world this turn (see the module docstring)."""
    wrote = call.outcome == "executed" or (call.outcome == "failed" and call.status == "landed")
    return (
        wrote and call.work_order == turn.work_order and _stamped(call) and _in_reply(call, texts)
    )


def _executed(turn: TurnRecord, table: ToolTable, texts: list[str]) -> set[str]:
    """The steps a call of this turn wrote with outcome ``executed``."""
    return {
        table.tools[c.tool][0]
        for c in turn.tool_calls
        if c.outcome == "executed" and c.tool in table.tools and _counts(c, turn, texts)
    }


def read_harness_turn(turn: TurnRecord, table: ToolTable) -> TurnBookings:
    texts = [turn.reply, *turn.follow_ups]
    steps: dict[str, None] = {}
    landed: dict[str, int] = {}  # writes of a step by timeouts that landed
    booked: set[tuple[str, str]] = set()
    refused = stale = unknown = 0
    for call in turn.tool_calls:
        if call.outcome == "status":  # the read-only status tool: reads, executes nothing
            continue
        known = table.tools.get(call.tool)
        if known is None:
            unknown += 1
            continue
        if call.outcome == "refused":
            refused += 1
        elif call.outcome == "stale":
            stale += 1
        elif _counts(call, turn, texts):
            if call.outcome == "failed":
                landed[known[0]] = landed.get(known[0], 0) + 1
            steps[known[0]] = None
            booked.add((known[1], call.work_order))
    primary = tuple(steps)
    if landed:  # each write beyond a step's first is a duplicate
        primary += tuple(v for v, n in landed.items() for _ in range(n - 1))
        primary += tuple(v for v in landed if v in _executed(turn, table, texts))
    return TurnBookings(
        primary=primary,
        decline_aware=primary,
        booked=frozenset(booked),
        citations=0,
        redisplays=stale,
        unknown=unknown,
        refused=refused,
        false_completions=0,
    )
