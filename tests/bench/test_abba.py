"""The benches' ABBA rounds and their paired statistic (bench._common.abba, paired; #50)."""

from __future__ import annotations

import math

from bench._common import abba, paired


def test_abba_alternates_the_order_and_keeps_each_rounds_results_in_place() -> None:
    ran: list[str] = []
    clock = iter(range(100))

    def measure(name: str) -> tuple[str, int]:
        ran.append(name)
        return name, next(clock)

    rounds = abba([lambda: measure("a"), lambda: measure("b"), lambda: measure("c")], 4)
    assert ran == list("abccbaabccba")
    # each round lists a, b, c in that order, whatever order they ran in
    assert [[name for name, _ in r] for r in rounds] == [list("abc")] * 4
    assert [[t for _, t in r] for r in rounds] == [[0, 1, 2], [5, 4, 3], [6, 7, 8], [11, 10, 9]]


def test_abba_of_no_rounds_runs_nothing() -> None:
    ran: list[int] = []
    assert abba([lambda: ran.append(1)], 0) == []
    assert ran == []


def test_paired_is_the_median_of_the_rounds_ratios_and_their_range() -> None:
    # one core 10, 20, 10, 20 s; two cores 6, 10, 5, 12 s: per-round ratios 0.6, 0.5, 0.5, 0.6
    one, two = [10.0, 20.0, 10.0, 20.0], [6.0, 10.0, 5.0, 12.0]
    mid, lo, hi = paired([t / o for o, t in zip(one, two, strict=True)])
    assert (mid, lo, hi) == (0.55, 0.5, 0.6)
    # best over best would read 5 / 10 = 0.5: the draw the paired median replaces
    assert min(two) / min(one) == 0.5
    assert paired([0.7, 0.2, 0.4]) == (0.4, 0.2, 0.7)  # odd: the middle round itself


def test_paired_of_nothing_is_not_a_number() -> None:
    assert all(math.isnan(x) for x in paired([]))
