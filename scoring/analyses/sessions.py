"""The report section of the sessions knob (issue #48, ours; docs/semantics.md), pure.

Per cell with sessions on (an arm, ``K`` and a handoff), against its control (the same cell
with one session, on the same seeds): strict success of both with Wilson intervals, the
paired difference with its discordant seeds and exact McNemar p-value, and the errors on the
turns after the first restart (the turns a restart can touch: of them, those with an error,
with a Wilson interval clustered by episode), beside the same turns of the control (the same
planned turns, which carry the same labels). The Holm correction over the knob's contrasts is
the variant-contrast table's ("Semantics: sessions"). Its compute is a
:class:`~scoring.analyses.base.Fold`: a first trial of a counted episode gives its seed,
success, per-turn errors and first restart as it is read, a batch's cells are made from them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from protocol.config import config_label
from protocol.records import CellKey, EpisodeRecord
from scoring.analyses.base import Analysis, Fold, Pair, markdown_section
from scoring.analyses.tallies import cell_groups
from scoring.replay.episode_score import EpisodeScore
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import cell_sort_key
from scoring.results.stats import clustered_wilson, mcnemar_exact, wilson

__all__ = ["SESSIONS", "SessionsLine", "SessionsPart", "sessions_lines", "sessions_parts"]


class SessionsPart(msgspec.Struct, frozen=True, kw_only=True):
    """One cell's counts from one batch: per seed, strict success, each scored turn's planned
    index and whether it has an error, and (a sessioned cell) its first restart's planned
    index; a control's turns are cut at its sessioned cell's restart by the lines."""

    cell: CellKey
    success: dict[int, bool]
    errors: dict[int, list[tuple[int, bool]]]  # seed -> (planned index, has an error) per turn
    restart: dict[int, int]  # seed -> the first planned index after a restart (sessioned)


class SessionsLine(msgspec.Struct, frozen=True, kw_only=True, tag="sessions"):
    cell: CellKey
    sessions: int
    handoff: str
    episodes: int
    successes: int
    success_ci: tuple[float, float]
    control_successes: int
    control_ci: tuple[float, float]
    only_control: int
    only_sessions: int
    p_value: float
    after_failed: int  # turns from the first restart on with an error
    after: int
    after_ci: tuple[float, float]
    control_after_failed: int  # the control's same planned turns with an error
    control_after: int
    control_after_ci: tuple[float, float]


def _turns(record: EpisodeRecord, score: EpisodeScore) -> tuple[list[tuple[int, bool]], int]:
    """Per scored turn (planned index, has an error), and the first planned index of a later
    session (-1 without one). Dynamic turns take the index of the planned turn before them."""
    out: list[tuple[int, bool]] = []
    planned, restart = 0, -1
    for t, s in zip(record.turns, score.primary.turns, strict=False):
        if not t.dynamic:
            planned = t.index
        if restart < 0 and isinstance(t.session, int):
            restart = t.index
        out.append((planned, bool(s.errors)))
    return out, restart


# a first trial's cell, seed, strict success, per-turn (planned index, error), first restart
_Episode = tuple[CellKey, int, bool, list[tuple[int, bool]], int]


def _episode(pair: Pair, cache: EpisodeCache) -> _Episode | None:
    record, score = pair
    if not score.counted or score.trial:
        return None
    turns, restart = _turns(record, score)
    return record.cell, score.seed, score.primary.success, turns, restart


def _parts(values: list[_Episode]) -> list[SessionsPart]:
    out: list[SessionsPart] = []
    for cell, episodes in cell_groups(values).items():
        part = SessionsPart(cell=cell, success={}, errors={}, restart={})
        for _, seed, success, turns, restart in episodes:
            part.success[seed] = success
            part.errors[seed] = turns
            if restart >= 0:
                part.restart[seed] = restart
        out.append(part)
    return out


def sessions_parts(batch: Sequence[Pair]) -> list[SessionsPart]:
    """Each cell's part of ``batch`` (first trials of counted episodes)."""
    return list(_PARTS(batch, EpisodeCache()))


def _merge(parts: Iterable[SessionsPart]) -> dict[CellKey, SessionsPart]:
    out: dict[CellKey, SessionsPart] = {}
    for p in parts:
        have = out.get(p.cell)
        out[p.cell] = (
            p
            if have is None
            else SessionsPart(
                cell=p.cell,
                success={**have.success, **p.success},
                errors={**have.errors, **p.errors},
                restart={**have.restart, **p.restart},
            )
        )
    return out


def _after(part: SessionsPart, seeds: list[int], restart: dict[int, int]) -> list[tuple[int, int]]:
    """Per seed, (turns with an error, turns) from its first restart on."""
    out = []
    for s in seeds:
        turns = [bad for i, bad in part.errors.get(s, []) if i >= restart.get(s, 1 << 30)]
        out.append((sum(turns), len(turns)))
    return out


def _ratio(clusters: list[tuple[int, int]]) -> tuple[int, int, tuple[float, float]]:
    k, n = sum(c[0] for c in clusters), sum(c[1] for c in clusters)
    return k, n, clustered_wilson([c for c in clusters if c[1]]) if n else (0.0, 1.0)


def sessions_lines(parts: list[SessionsPart]) -> tuple[SessionsLine, ...]:
    """One line per sessioned cell whose control ran on some of the same seeds."""
    cells = _merge(parts)
    lines: list[SessionsLine] = []
    for cell in sorted(cells, key=cell_sort_key):
        if not cell.knobs.sessions:
            continue
        plain = msgspec.structs.replace(cell.knobs, sessions=0, handoff="none", next_model="")
        control = cells.get(msgspec.structs.replace(cell, knobs=plain))
        part = cells[cell]
        seeds = sorted(set(part.success) & set(control.success)) if control else []
        if control is None or not seeds:
            continue
        k = sum(part.success[s] for s in seeds)
        c = sum(control.success[s] for s in seeds)
        b = sum(control.success[s] and not part.success[s] for s in seeds)
        a = sum(part.success[s] and not control.success[s] for s in seeds)
        ak, an, aci = _ratio(_after(part, seeds, part.restart))
        ck, cn, cci = _ratio(_after(control, seeds, part.restart))
        lines.append(
            SessionsLine(cell=cell, sessions=cell.knobs.sessions, handoff=cell.knobs.handoff,
                         episodes=len(seeds), successes=k, success_ci=wilson(k, len(seeds)),
                         control_successes=c, control_ci=wilson(c, len(seeds)), only_control=b,
                         only_sessions=a, p_value=mcnemar_exact(b, a), after_failed=ak,
                         after=an, after_ci=aci, control_after_failed=ck, control_after=cn,
                         control_after_ci=cci)
        )  # fmt: skip
    return tuple(lines)


def _handoff(cell: CellKey) -> str:
    """The handoff, and the model of every other session when another runs them."""
    nxt = cell.knobs.next_model
    return f"{cell.knobs.handoff}, to {nxt}" if nxt else cell.knobs.handoff


def _ci(ci: tuple[float, float]) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def sessions_section(lines: tuple[SessionsLine, ...]) -> list[str]:
    """The Markdown section of the sessioned cells (empty when there are none)."""
    header = ["arm", "K", "handoff", "configuration", "strict, sessions", "strict, control",
              "discordant (sessions only / control only)", "turns after a restart with an error",
              "control, same turns"]  # fmt: skip
    rows = [
        [x.cell.arm, str(x.sessions), _handoff(x.cell),
         config_label(msgspec.structs.replace(x.cell, knobs=msgspec.structs.replace(
             x.cell.knobs, sessions=0, handoff="none", next_model=""))),
         f"{x.successes}/{x.episodes} {_ci(x.success_ci)}",
         f"{x.control_successes}/{x.episodes} {_ci(x.control_ci)}",
         f"{x.only_sessions} / {x.only_control} (p = {x.p_value:.3g})",
         f"{x.after_failed}/{x.after} {_ci(x.after_ci)}",
         f"{x.control_after_failed}/{x.control_after} {_ci(x.control_after_ci)}"]
        for x in lines
    ]  # fmt: skip
    note = (
        "The episode's turns split into `K` sessions at boundaries the seed places; at each "
        "the conversation restarts with the brief, and `handoff` says what crosses: nothing, "
        "the agent's own note, or what the arm keeps. Strict success against the same cell "
        "with one session on the same seeds (exact McNemar), and the turns from the first "
        "restart on with an error beside the control's same turns (Wilson 95%, clustered by "
        'episode); the Holm-corrected contrasts are the family "Semantics: sessions".'
    )
    return markdown_section("Sessions (sessions knob; ours, docs/semantics.md)", note, header, rows)


_PARTS = Fold(_episode, _parts)

SESSIONS: Analysis[SessionsPart, SessionsLine] = Analysis(
    name="sessions",
    table="Semantics: sessions",
    compute=_PARTS,
    finish=sessions_lines,
    markdown=sessions_section,
)
