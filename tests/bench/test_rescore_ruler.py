"""The rescoring bench's per-round ratios (bench._common.ratios_of; #50, ruler71)."""

from __future__ import annotations

from bench._common import paired, ratios_of


def test_ratios_of_pairs_two_measures_within_each_round_at_one_field() -> None:
    # rounds of (wall, CPU) for bare, one core: the wall of round 2 carries a loaded wait
    rounds = [
        [(4.0, 4.0), (10.0, 9.0)],
        [(4.0, 4.0), (16.0, 10.0)],
        [(5.0, 5.0), (11.0, 11.0)],
    ]
    assert ratios_of(rounds, 1, 0, 1) == [2.25, 2.5, 2.2]  # CPU
    assert ratios_of(rounds, 1, 0, 0) == [2.5, 4.0, 2.2]  # wall
    assert ratios_of(rounds, 0, 1, 1) == [4.0 / 9.0, 0.4, 5.0 / 11.0]  # either way round
    # the row's figure: the median of the rounds' ratios and their range
    assert paired(ratios_of(rounds, 1, 0, 1)) == (2.25, 2.2, 2.5)
    assert paired(ratios_of(rounds, 1, 0, 0)) == (2.5, 2.2, 4.0)


def test_ratios_of_keeps_the_order_the_rounds_ran() -> None:
    rounds = [[(1.0,), (3.0,)], [(2.0,), (2.0,)], [(4.0,), (2.0,)]]
    assert ratios_of(rounds, 1, 0, 0) == [3.0, 1.0, 0.5]
    assert ratios_of([], 1, 0, 0) == []
