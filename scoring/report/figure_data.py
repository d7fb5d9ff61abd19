"""The data behind the paper's figures (:mod:`scoring.report.figures`), as ``ladder report`` writes
it to ``report-figures.json`` beside the PNGs. Pure data."""

from __future__ import annotations

import msgspec

__all__ = [
    "PER_EPISODES",
    "ChannelPoint",
    "ChannelRate",
    "FigureData",
    "OmissionRow",
    "Point",
    "UnrequestedCount",
]

# Figure 5(a): unrequested executions per this many episodes (Table 9's caption: "counts per
# 128 episodes")
PER_EPISODES = 128


class Point(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One strict-success point with its Wilson 95% interval; ``panel`` names Figure 4's
    panel (None, and left out of the JSON, in a one-panel figure)."""

    panel: str | None = None
    series: str
    x: str
    y: float
    lo: float
    hi: float
    n: int


class ChannelRate(msgspec.Struct, frozen=True, kw_only=True):
    """Figure 5(a): one channel's errors over its label turns in one cell."""

    panel: str
    series: str  # the channel
    x: str  # the arm
    y: float
    lo: float
    hi: float
    errors: int
    n: int  # turns carrying the channel's label


class UnrequestedCount(msgspec.Struct, frozen=True, kw_only=True):
    """Figure 5(a): one cell's unrequested executions per :data:`PER_EPISODES` episodes."""

    panel: str
    series: str  # "unrequested"
    x: str  # the arm
    y: float
    count: int
    episodes: int


ChannelPoint = ChannelRate | UnrequestedCount
OmissionRow = dict[str, str | float | int]  # Figure 5(b): one bar (its FAILURE_KINDS counts)
FigureData = list[Point] | list[ChannelPoint] | list[OmissionRow]
