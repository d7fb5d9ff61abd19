"""The placement shape the rules beyond one-shot state share (issue #48, generator 6; OURS).

Budget, expiry and exclusive steps (:mod:`protocol.stress.budget`, :mod:`protocol.stress.expiry`,
:mod:`protocol.stress.exclusive`) each pick, from the seed alone, one step run under perfect
play that the rest of the plan leaves alone (:func:`settled_runs`), and serve some fillers
after that run as the user's requests of the rule (:func:`place_requests`), each on a fresh
work order. Every other turn stays the control's, so the control's labels off the placed turns
stay too.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from protocol.episode.parts import stream_seed
from protocol.records import Episode, Turn, TurnKind
from protocol.stress.doses import fresh_work_orders, perfect_play

__all__ = ["fillers_after", "place_requests", "seeded_subset", "settled_runs"]


def settled_runs(episode: Episode) -> dict[str, int]:
    """Step -> the planned turn of its perfect-play run, for every step run on a planned turn
    (eligible there) that no later planned turn requests, names or cancels."""
    plan = episode.turns
    first: dict[str, int] = {}
    for i, (t, p) in enumerate(zip(plan, perfect_play(episode), strict=True)):
        if t.step is not None and p.verdict is not None and p.verdict.label == "eligible":
            first.setdefault(t.step, i)
    return {
        v: i
        for v, i in first.items()
        if v != episode.revision.cancel
        and not any(t.step == v or v in t.named for t in plan[i + 1 :])
    }


def fillers_after(episode: Episode, i: int) -> list[int]:
    """The planned fillers after turn ``i``, in order."""
    plan = episode.turns
    return [j for j in range(i + 1, len(plan)) if plan[j].kind == "filler"]


def seeded_subset(episode: Episode, stream: str, indices: Sequence[int], k: int) -> list[int]:
    """The ``k`` of ``indices`` with the smallest keys drawn from the seed (each index its own
    stream, so a smaller ``k``'s indices are a subset of a larger one's), in order."""
    keys = {j: random.Random(stream_seed(episode.spec, f"{stream}|{j}")).random() for j in indices}
    return sorted(sorted(indices, key=lambda j: (keys[j], j))[:k])


def place_requests(
    episode: Episode, kind: TurnKind, step: str, slots: Sequence[int], wo_stream: str, words: str
) -> tuple[Turn, ...]:
    """The episode's turns with each of ``slots`` served as a ``kind`` request for ``step``,
    in ``words`` (a format with ``{text}``, the step's brief text, and ``{wo}``), each on a
    fresh work order drawn from ``wo_stream``."""
    text = episode.step(step).text
    wos = fresh_work_orders(episode, wo_stream, slots)
    turns = list(episode.turns)
    for j in slots:
        turns[j] = Turn(
            index=j,
            kind=kind,
            step=step,
            work_order=wos[j],
            text=words.format(text=text, wo=wos[j]),
        )
    return tuple(turns)
