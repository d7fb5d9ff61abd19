"""pass^k and the per-seed majority of repeated trials (--trials K, #40;
scoring.results.trials): tau-bench's estimator, checked against its definition by brute force."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.results.trials import majority, pass_hat_k, pass_hats

seeds = st.lists(st.lists(st.booleans(), min_size=1, max_size=6), min_size=1, max_size=8)


def _brute(outcomes: list[list[bool]], k: int) -> float | None:
    """The share of k-subsets of a seed's trials that all succeed, averaged over seeds with
    at least k trials: what C(c, k) / C(n, k) counts."""
    shares = []
    for trials in outcomes:
        if len(trials) < k:
            continue
        subsets = list(itertools.combinations(trials, k))
        shares.append(Fraction(sum(all(s) for s in subsets), len(subsets)))
    return float(sum(shares) / len(shares)) if shares else None


def test_worked_values() -> None:
    # one seed, 2 of 3 trials succeed: pass^1 2/3, pass^2 C(2,2)/C(3,2) = 1/3, pass^3 0
    assert pass_hats([[True, True, False]], 3) == pytest.approx((2 / 3, 1 / 3, 0.0))
    # two seeds averaged: (1 + 0) / 2 at every k
    assert pass_hats([[True] * 4, [False] * 4], 4) == (0.5, 0.5, 0.5, 0.5)
    # a seed with fewer counted trials than k is left out of pass^k, never a failure
    assert pass_hat_k([[True, True, True], [False]], 2) == 1.0
    assert pass_hat_k([[True]], 2) is None
    with pytest.raises(ValueError):
        pass_hat_k([[True]], 0)


@given(seeds, st.integers(1, 6))
def test_pass_k_is_the_share_of_k_subsets_that_all_succeed(
    outcomes: list[list[bool]], k: int
) -> None:
    got, want = pass_hat_k(outcomes, k), _brute(outcomes, k)
    assert (got is None) == (want is None)
    if got is not None:
        assert got == pytest.approx(want)


@given(st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=1, max_size=8))
def test_pass_k_falls_with_k_and_pass_1_is_the_mean_success(outcomes: list[list[bool]]) -> None:
    hats = pass_hats(outcomes, 4)
    assert all(h is not None and 0.0 <= h <= 1.0 for h in hats)
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(hats))  # type: ignore[operator]
    mean = sum(sum(t) / len(t) for t in outcomes) / len(outcomes)
    assert hats[0] == pytest.approx(mean)


@given(st.lists(st.booleans(), min_size=1, max_size=8), st.integers(1, 5))
def test_identical_trials_give_pass_k_equal_to_pass_1(per_seed: list[bool], k: int) -> None:
    """A deterministic server (temperature 0): every trial of a seed alike."""
    outcomes = [[ok] * 5 for ok in per_seed]
    assert pass_hat_k(outcomes, k) == pytest.approx(pass_hat_k(outcomes, 1))


def test_majority_is_the_one_outcome_of_one_trial_and_a_tie_fails() -> None:
    assert majority([True]) and not majority([False])
    assert majority([True, True, False]) and not majority([True, False])
    assert not majority([True, False, False])
