"""The ``ladder score --episodes`` table: one line per episode, per configuration. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from protocol.config import config_label
from scoring.report.tables import text_table
from scoring.results.cells import config_of
from scoring.results.episode_rows import EpisodeRow

__all__ = ["EPISODE_HEADER", "episode_table"]

EPISODE_HEADER = (
    "arm",
    "seed",
    "strict",
    "decl.-aware",
    "first failing turn",
    "errors",
    "agent tok k",
    "agent calls",
    "helper calls (cached)",
    "wall s",
    "termination",
)


def _yes(ok: bool) -> str:
    return "yes" if ok else "no"


def _first(r: EpisodeRow) -> str:
    if r.first_failing_turn is None:
        return "-"
    return f"{r.first_failing_turn} {r.first_failing_kind} {r.first_failing_channel}"


def _cells(r: EpisodeRow) -> list[str]:
    return [
        r.cell.arm,
        str(r.seed),
        _yes(r.strict),
        _yes(r.decline_aware),
        _first(r),
        str(r.errors),
        f"{r.agent_tokens / 1000:.1f}",
        str(r.agent_calls),
        f"{r.helper_calls} ({r.helper_cached})",
        f"{r.wall_s:.2f}",
        r.termination,
    ]


def episode_table(rows: Sequence[EpisodeRow]) -> str:
    """Every configuration of *rows* (in their order): a heading, then one line per episode."""
    configs: dict[object, list[EpisodeRow]] = {}
    for r in rows:
        configs.setdefault(config_of(r.cell), []).append(r)
    parts: list[str] = []
    for members in configs.values():
        parts += [
            f"Episodes: {config_label(members[0].cell)}",
            text_table(EPISODE_HEADER, [_cells(r) for r in members]),
            "",
        ]
    return "\n".join(parts).rstrip()
