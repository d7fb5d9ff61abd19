"""Doses of a grid that stress the same turns (issue #46, ours; docs/stress.md), refused.

Two doses of one stress measure nothing apart when they stress the same planned turns on
every episode of the grid (generator 5's doses 0.1 and 0.25 did for ``restate`` on every seed
of ``user-style.toml``). :func:`dose_collisions` compares the planned stress turns
(:func:`protocol.stress.plan.stress_plan`) of each pair of neighbouring doses a grid sets for
one stress, over the grid's episodes; it stops at the first episode where they differ, so a
grid whose doses differ costs a few episodes to check.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import msgspec

from protocol import SpecError, generate
from protocol.records import CellKey, Episode, EpisodeSpec
from protocol.stress.doses import dose_count
from protocol.stress.plan import stress_plan

__all__ = ["dose_collisions"]


def _doses(cells: Sequence[CellKey]) -> dict[tuple[str, str], set[float]]:
    """(knob, value) -> the doses the grid's cells set for it (a stress on a variant without
    a dose runs the default)."""
    out: dict[tuple[str, str], set[float]] = {}
    for c in cells:
        k = c.knobs
        if k.spoof != "none":
            out.setdefault(("spoof", k.spoof), set()).add(k.spoof_dose)
        if k.user_style != "cooperative":
            out.setdefault(("user_style", k.user_style), set()).add(k.user_dose)
    return out


def _plan(ep: Episode, knob: str, value: str, dose: float) -> list[int]:
    if knob == "spoof":
        return list(stress_plan(ep, spoof=value, spoof_dose=dose))
    return list(stress_plan(ep, user_style=value, user_dose=dose))  # type: ignore[arg-type]


def _episodes(cells: Sequence[CellKey], seeds: Sequence[int], generator: int) -> list[EpisodeSpec]:
    """The grid's distinct episodes (the stress plan reads no wording, so each at tier 0:
    the held-out tier draws its rewrites from a stream of its own)."""
    specs: dict[EpisodeSpec, None] = {}
    for c in cells:
        for s in seeds:
            spec = c.spec(s, generator)
            specs[msgspec.structs.replace(spec, paraphrase_tier=0)] = None
    return list(specs)


def dose_collisions(cells: Sequence[CellKey], seeds: Sequence[int], generator: int) -> list[str]:
    """One problem per pair of neighbouring doses of a stress that stress the same planned
    turns on every episode of a grid's ``cells`` and ``seeds`` (generator 6 on: a grid pinned to
    generator 5 reproduces the runs made with it, its collapsed doses included)."""
    if generator < 6:
        return []
    pairs = [
        (knob, value, a, b)
        for (knob, value), doses in sorted(_doses(cells).items())
        for a, b in itertools.pairwise(sorted(doses))
        if a > 0
    ]
    if not pairs:
        return []
    specs = _episodes(cells, seeds, generator)
    episodes: dict[EpisodeSpec, Episode] = {}

    def episode(spec: EpisodeSpec) -> Episode:
        if spec not in episodes:
            episodes[spec] = generate(spec)
        return episodes[spec]

    problems: list[str] = []
    for knob, value, a, b in pairs:
        try:
            same = all(
                _plan(episode(s), knob, value, a) == _plan(episode(s), knob, value, b)
                for s in specs
            )
        except SpecError:  # a spec the generator refuses: its own check says why
            return problems
        if same:
            dose = "spoof_dose" if knob == "spoof" else "user_dose"
            problems.append(
                f'{knob} = "{value}": {dose} {a:g} and {b:g} stress the same turns on every '
                f"episode of the grid ({_counted(a, b, generator)}); keep one"
            )
    return problems


def _counted(a: float, b: float, generator: int) -> str:
    """Why two doses stress the same turns."""
    if dose_count(a, 99, generator) == dose_count(b, 99, generator):
        return f"both ask for {dose_count(a, 99, generator)} stress slots"
    return "the eligible turns run out"
