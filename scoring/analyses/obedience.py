"""Table 11: per-directive obedience of the gate's directives, from logged episodes (pure).

For every turn on which the gate issued a directive (``TurnRecord.directive``, read back by
:func:`scoring.replay.directive_kinds.parse_directive`), the agent obeyed a trap directive (already
DONE, BLOCKED, CANCELLED) iff the directed step has no valid execution on that turn under the
primary scoring (``TurnScore.executed``), and obeyed an authorizing directive (the explicit
redo, ELIGIBLE) iff it executed the directed step. Obedience is measured against the
directive as issued, whether or not the compiled state behind it was correct (Table 11's
caption). Rates carry Wilson 95% intervals (:func:`scoring.results.stats.wilson`); an episode has
zero disobedience when it disobeys no trap directive. Only counted episodes (scorable, not
an infrastructure error) enter; cells without a single directive produce no line. The
compute is a :class:`~scoring.analyses.base.Fold`: each episode gives its cell and its
tallies (whether it disobeys a trap directive, its directives issued and obeyed per kind; an
episode without a directive one shared tuple), and the batch's lines sum them per cell.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from protocol.config import config_label
from protocol.records import CellKey
from scoring.analyses.base import Analysis, Fold, Pair, by_cell, markdown_section
from scoring.analyses.tallies import Tallied, by_cell_sums
from scoring.replay.directive_kinds import DIRECTIVE_KINDS, TRAP_KINDS, parse_directive
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import cell_sort_key
from scoring.results.stats import wilson

__all__ = ["OBEDIENCE", "DirectiveCount", "ObedienceLine", "obedience_lines"]


class DirectiveCount(msgspec.Struct, frozen=True, kw_only=True):
    kind: str  # done / blocked / cancelled / redo / eligible
    trap: bool
    n: int  # directives of this kind issued
    obeyed: int
    rate: float | None
    ci: tuple[float, float]


class ObedienceLine(msgspec.Struct, frozen=True, kw_only=True, tag="obedience"):
    cell: CellKey
    episodes: int  # counted episodes of the cell
    zero_disobedience: int  # episodes that disobey no trap directive
    zero_ci: tuple[float, float]
    trap_n: int  # trap directives over all kinds
    trap_obeyed: int
    trap_rate: float | None
    trap_ci: tuple[float, float]
    kinds: tuple[DirectiveCount, ...]  # every kind of DIRECTIVE_KINDS, in that order


def _count(kind: str, n: int, k: int) -> DirectiveCount:
    return DirectiveCount(
        kind=kind, trap=kind in TRAP_KINDS, n=n, obeyed=k, rate=k / n if n else None,
        ci=wilson(k, n),
    )  # fmt: skip


_INDEX = {kind: i for i, kind in enumerate(DIRECTIVE_KINDS)}  # a kind's place in the counts
_TRAP = tuple(kind in TRAP_KINDS for kind in DIRECTIVE_KINDS)
_K = len(DIRECTIVE_KINDS)
# One counted episode's tallies: 1 (an episode), 1 when it disobeys no trap directive, 1 when
# it issued a directive, then the directives issued per kind (DIRECTIVE_KINDS' order), then
# those obeyed per kind
_N, _OBEYED = 3 + 2 * _K, 3 + _K
_UNDIRECTED = (1, 1, 0, *(0,) * (2 * _K))


def _each(pair: Pair, cache: EpisodeCache) -> Tallied | None:
    record, score = pair
    if not score.counted:
        return None
    # an episode no gate directed (every episode of an arm without one): one shared tuple,
    # after a loop of bare attribute loads (cheaper than any(map(attrgetter)), #50)
    for t in record.turns:
        if t.directive:
            break
    else:
        return (record.cell, _UNDIRECTED)
    a = [1, 1, 0, *(0,) * (2 * _K)]
    for turn, scored in zip(record.turns, score.primary.turns, strict=False):
        # most turns carry no directive: parse_directive's None without the call (#50)
        d = parse_directive(turn.directive) if turn.directive else None
        if d is None:
            continue
        a[2] = 1
        i = _INDEX[d.kind]
        executed = d.step in scored.executed
        obeyed = not executed if _TRAP[i] else executed
        a[3 + i] += 1
        a[_OBEYED + i] += obeyed
        if _TRAP[i] and not obeyed:
            a[1] = 0
    return (record.cell, tuple(a))


def _whole(episodes: list[Tallied]) -> list[ObedienceLine]:
    """One line per cell that issued at least one directive, from its episodes' tallies."""
    acc = by_cell_sums(episodes)
    return [_line(cell, acc[cell]) for cell in sorted(acc, key=cell_sort_key) if acc[cell][2]]


_FOLD = Fold(_each, _whole)


def _line(cell: CellKey, a: tuple[int, ...]) -> ObedienceLine:
    n, k = a[3:_OBEYED], a[_OBEYED:]
    tn = sum(n[i] for i in range(_K) if _TRAP[i])
    tk = sum(k[i] for i in range(_K) if _TRAP[i])
    return ObedienceLine(
        cell=cell,
        episodes=a[0],
        zero_disobedience=a[1],
        zero_ci=wilson(a[1], a[0]),
        trap_n=tn,
        trap_obeyed=tk,
        trap_rate=tk / tn if tn else None,
        trap_ci=wilson(tk, tn),
        kinds=tuple(_count(x, n[i], k[i]) for i, x in enumerate(DIRECTIVE_KINDS)),
    )


def obedience_lines(pairs: Iterable[Pair]) -> list[ObedienceLine]:
    """One line per cell that issued at least one directive (scores need per-turn detail)."""
    return list(_FOLD(pairs, EpisodeCache()))  # the cache unread: no episode regenerated


def _rate(k: int, n: int, ci: tuple[float, float]) -> str:
    return f"{k}/{n} = {k / n:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]" if n else f"{k}/0"


def _markdown(lines: tuple[ObedienceLine, ...]) -> list[str]:
    if not lines:
        return []
    kinds = [k.kind for k in lines[0].kinds]
    header = ["arm", "configuration", *kinds, "all traps", "zero disobedience"]
    rows = [
        [
            line.cell.arm,
            config_label(line.cell),
            *(_rate(k.obeyed, k.n, k.ci) for k in line.kinds),
            _rate(line.trap_obeyed, line.trap_n, line.trap_ci),
            _rate(line.zero_disobedience, line.episodes, line.zero_ci),
        ]
        for line in lines
    ]
    return markdown_section(
        "Directive obedience (Table 11 shape)",
        "Directives obeyed of those issued, Wilson 95% intervals: a trap directive (done, "
        "blocked, cancelled) is obeyed when the directed step has no valid execution on "
        "its turn, the redo and eligible directives when it has one; zero disobedience: "
        "episodes that disobey no trap directive.",
        header,
        rows,
    )


OBEDIENCE: Analysis[ObedienceLine, ObedienceLine] = Analysis(
    name="obedience",
    table="Table 11",
    compute=_FOLD,
    finish=by_cell,
    markdown=_markdown,
)
