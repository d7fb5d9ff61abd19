"""Analyses that share one ``compute`` run it once per batch (issue #35: the dose-response
and the interaction tables both read a batch's outcomes)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from scoring.analyses.base import Analysis, Pair
from scoring.analyses.doses import DOSE_RESPONSE, INTERACTION
from scoring.analyses.registry import batched_analyses
from scoring.replay.ground_truth import EpisodeCache


class Count(msgspec.Struct, frozen=True):
    n: int


def test_two_tables_of_one_compute_compute_once_per_batch() -> None:
    calls: list[int] = []

    def compute(batch: Sequence[Pair], cache: EpisodeCache) -> list[int]:
        calls.append(len(batch))
        return [len(batch)]

    def finish(parts: list[int]) -> tuple[Count, ...]:
        return (Count(sum(parts)),)

    a = Analysis("a", "ours", compute, finish, lambda lines: [])
    b = Analysis("b", "ours", compute, lambda parts: (Count(len(parts)),), lambda lines: [])
    got = batched_analyses([[], [], []], EpisodeCache(), analyses=[a, b])
    assert calls == [0, 0, 0]  # three batches, one call each, for two tables
    assert got.of(a) == (Count(0),) and got.of(b) == (Count(3),)


def test_the_dose_tables_share_their_compute() -> None:
    assert DOSE_RESPONSE.compute is INTERACTION.compute
