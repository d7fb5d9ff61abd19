"""Table 11: per-directive obedience of the gate's directives, from logged episodes (pure).

For every turn on which the gate issued a directive (``TurnRecord.directive``, read back by
:func:`scoring.replay.directive_kinds.parse_directive`), the agent obeyed a trap directive (already
DONE, BLOCKED, CANCELLED) iff the directed step has no valid execution on that turn under the
primary scoring (``TurnScore.executed``), and obeyed an authorizing directive (the explicit
redo, ELIGIBLE) iff it executed the directed step. Obedience is measured against the
directive as issued, whether or not the compiled state behind it was correct (Table 11's
caption). Rates carry Wilson 95% intervals (:func:`scoring.results.stats.wilson`); an episode has
zero disobedience when it disobeys no trap directive. Only counted episodes (scorable, not
an infrastructure error) enter; cells without a single directive produce no line.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter

import msgspec

from protocol.config import config_label
from protocol.records import CellKey, EpisodeRecord
from scoring.analyses.base import Analysis, by_cell, markdown_section, uncached
from scoring.replay.directive_kinds import DIRECTIVE_KINDS, TRAP_KINDS, parse_directive
from scoring.replay.episode_score import EpisodeScore
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


_DIRECTIVE = attrgetter("directive")


def obedience_lines(pairs: Iterable[tuple[EpisodeRecord, EpisodeScore]]) -> list[ObedienceLine]:
    """One line per cell that issued at least one directive (scores need per-turn detail)."""
    n: dict[CellKey, dict[str, int]] = {}
    k: dict[CellKey, dict[str, int]] = {}
    episodes: dict[CellKey, int] = {}
    clean: dict[CellKey, int] = {}
    issued: set[CellKey] = set()
    for record, score in pairs:
        if not score.counted:
            continue
        cell = record.cell
        n.setdefault(cell, dict.fromkeys(DIRECTIVE_KINDS, 0))
        k.setdefault(cell, dict.fromkeys(DIRECTIVE_KINDS, 0))
        episodes[cell] = episodes.get(cell, 0) + 1
        disobeyed = False
        # an episode no gate directed (every episode of an arm without one): its turns
        # checked in one C loop, none walked in Python (#50)
        directed = any(map(_DIRECTIVE, record.turns))
        for turn, scored in (
            zip(record.turns, score.primary.turns, strict=False) if directed else ()
        ):
            # most turns carry no directive: parse_directive's None without the call (#50)
            d = parse_directive(turn.directive) if turn.directive else None
            if d is None:
                continue
            issued.add(cell)
            executed = d.step in scored.executed
            obeyed = not executed if d.kind in TRAP_KINDS else executed
            n[cell][d.kind] += 1
            k[cell][d.kind] += obeyed
            disobeyed |= d.kind in TRAP_KINDS and not obeyed
        clean[cell] = clean.get(cell, 0) + (not disobeyed)
    out: list[ObedienceLine] = []
    for cell in sorted(issued, key=cell_sort_key):
        tn = sum(n[cell][x] for x in TRAP_KINDS)
        tk = sum(k[cell][x] for x in TRAP_KINDS)
        out.append(
            ObedienceLine(
                cell=cell,
                episodes=episodes[cell],
                zero_disobedience=clean[cell],
                zero_ci=wilson(clean[cell], episodes[cell]),
                trap_n=tn,
                trap_obeyed=tk,
                trap_rate=tk / tn if tn else None,
                trap_ci=wilson(tk, tn),
                kinds=tuple(_count(x, n[cell][x], k[cell][x]) for x in DIRECTIVE_KINDS),
            )
        )
    return out


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
    compute=uncached(obedience_lines),
    finish=by_cell,
    markdown=_markdown,
)
