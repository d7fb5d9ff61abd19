"""What a reply executes: the one reading of bookings shared by the arms and the scorer.

In the payload protocol a booking is a ref line (``protocol.state.receipts``); in the tools
variant (Appendix G) it is an ``ACTION`` line naming a step's tool with the current work
order. Either way the result is a :class:`~protocol.state.receipts.Receipts`.
"""

from __future__ import annotations

from protocol.brief import tool_name
from protocol.records import Booking, Episode
from protocol.state.receipts import (
    Receipts,
    classify,
    find_actions,
    find_refs,
    normalize_work_order,
)

__all__ = ["code_table", "read_execution"]


def code_table(episode: Episode) -> dict[str, str]:
    """Completion code -> step id."""
    return {s.code: s.id for s in episode.steps}


def read_execution(
    reply: str, episode: Episode, work_order: str | None, *, tools: bool = False
) -> Receipts:
    """The bookings, re-displays and unknown codes of ``reply`` on a turn."""
    if not tools:
        refs = find_refs(reply)
        return classify(refs, code_table(episode) if refs else {}, work_order)
    by_tool = {tool_name(s): s for s in episode.steps}
    bookings: dict[tuple[str, str], Booking] = {}
    for action in find_actions(reply):
        step = by_tool.get(action.tool)
        wo = normalize_work_order(action.work_order)
        if step is None or wo is None or wo != work_order:
            continue
        bookings.setdefault((step.code, wo), Booking(step=step.id, code=step.code, work_order=wo))
    return Receipts(bookings=tuple(bookings.values()), redisplays=(), unknown=())
