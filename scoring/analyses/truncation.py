"""Replies cut at their token budget, and the episodes an average leaves out (#49). Pure.

A reply whose ``finish_reason`` is ``length`` stopped at its ``max_tokens``: an agent's
ref line written after a preamble is then missing (scored as an omission), a matcher's or
compiler's answer malformed. :func:`cut_replies` counts them per cell and role (agent,
matcher, compiler) over every request made (a call served from the helper cache made
none; one episode's: :func:`scoring.replay.cuts.record_cuts`, kept on its score); :func:`cut_warnings` names the cells and roles whose share passes
:data:`CUT_WARN_SHARE`. :func:`episode_counts` counts a cell's episodes by how they ended,
so a cost averaged over the completed ones can say what it left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from protocol.records import CellKey, EpisodeRecord
from scoring.replay.cuts import CUT_ROLES, Cut, add_cuts, record_cuts

__all__ = [
    "CUT_ROLES",
    "CUT_WARN_SHARE",
    "Cut",
    "add_cuts",
    "cut_line",
    "cut_replies",
    "cut_share",
    "cut_warnings",
    "episode_counts",
    "record_cuts",
]

# OURS: a cell and role is warned about when more than 5% of its replies were cut: a few
# long replies are a model's habit, more than one in twenty moves the scores (#49).
CUT_WARN_SHARE = 0.05


def cut_line(cut: Mapping[str, tuple[int, int]]) -> str:
    """A cell's replies cut at their token budget, for the live lines (#49): ``cut at
    budget: agent 3/40, matcher 1/20 (over 5%)``, each role that had one, marked when a
    role's share passes :data:`CUT_WARN_SHARE`; ``""`` when none was."""
    parts = [f"{role} {n}/{made}" for role, (n, made) in cut.items() if n]
    if not parts:
        return ""
    over = any(n > CUT_WARN_SHARE * made for n, made in cut.values() if made)
    return f"cut at budget: {', '.join(parts)}" + (f" (over {CUT_WARN_SHARE:.0%})" if over else "")


def cut_replies(records: Iterable[EpisodeRecord]) -> dict[CellKey, Cut]:
    """Per cell, per role of :data:`CUT_ROLES`: replies that ended on ``length`` and the
    replies made (requests sent, every termination counted)."""
    out: dict[CellKey, list[Cut]] = {}
    for r in records:
        out.setdefault(r.cell, []).append(record_cuts(r))
    return {cell: add_cuts(cuts) for cell, cuts in out.items()}


def cut_share(cut: Mapping[str, tuple[int, int]], share: float = CUT_WARN_SHARE) -> list[str]:
    """The roles of one cell whose share of cut replies passes ``share``."""
    return [role for role, (n, made) in cut.items() if made and n / made > share]


def cut_warnings(
    cuts: Mapping[CellKey, Cut],
    label: Callable[[CellKey], str],
    share: float = CUT_WARN_SHARE,
) -> list[str]:
    """``warning: <cell>: 88/88 agent replies (100%) cut at their token budget`` for each
    cell and role whose share of cut replies passes ``share``."""
    out = []
    for cell, roles in cuts.items():
        for role in cut_share(roles, share):
            cut, made = roles[role]
            out.append(
                f"warning: {label(cell)}: {cut}/{made} {role} replies ({cut / made:.0%}) "
                "cut at their token budget (finish_reason length)"
            )
    return out


def episode_counts(records: Iterable[EpisodeRecord]) -> dict[CellKey, dict[str, int]]:
    """Per cell: episodes ``completed``, ``overflowed`` (context_overflow: the model's
    failure, counted in a cell's n) and ``failed`` (ended on anything else)."""
    out: dict[CellKey, dict[str, int]] = {}
    for r in records:
        c = out.setdefault(r.cell, {"completed": 0, "overflowed": 0, "failed": 0})
        if r.termination == "completed":
            c["completed"] += 1
        elif r.termination == "context_overflow":
            c["overflowed"] += 1
        else:
            c["failed"] += 1
    return out
