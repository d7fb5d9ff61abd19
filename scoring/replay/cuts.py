"""One episode's replies cut at their token budget (``finish_reason: length``), per role
(#49). Pure.

Counted when an episode is scored (:class:`scoring.replay.episode_score.EpisodeScore`'s ``cut``)
so a cell line sums them (:func:`scoring.results.cells.cell_line`);
:mod:`scoring.analyses.truncation` counts them per cell from records and warns past its
threshold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from protocol.records import EpisodeRecord

__all__ = ["CUT_ROLES", "Cut", "add_cuts", "record_cuts"]

CUT_ROLES = ("agent", "matcher", "compiler")

Cut = dict[str, tuple[int, int]]  # role -> (replies cut at their budget, replies made)


def record_cuts(record: EpisodeRecord) -> Cut:
    """One episode's replies per role of :data:`CUT_ROLES` that made a request: those that
    ended on ``length`` and those made (requests sent, every termination counted); a role
    with no request is left out."""
    made = [c for turn in record.turns for c in turn.calls if not c.cached]
    roles: list[str] = [c.role for c in made]
    out: Cut = {}
    for role in CUT_ROLES:  # a few passes over the calls in comprehensions (#50)
        n = roles.count(role)
        if n:  # all calls of one role (the common record): no filter
            of_role = made if n == len(made) else [c for c in made if c.role == role]
            out[role] = ([c.finish_reason for c in of_role].count("length"), n)
    return out


def add_cuts(cuts: Iterable[Mapping[str, tuple[int, int]]]) -> Cut:
    """The sum of several episodes' (or cells') counts, every role of :data:`CUT_ROLES`."""
    total = {role: [0, 0] for role in CUT_ROLES}
    for cut in cuts:
        for role, (n, made) in cut.items():
            if role in total:
                total[role][0] += n
                total[role][1] += made
    return {role: (v[0], v[1]) for role, v in total.items()}
