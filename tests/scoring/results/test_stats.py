"""Wilson intervals, exact McNemar and Holm against published worked examples."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.analyses.doses import did_interval
from scoring.results.stats import (
    clustered_wilson,
    holm,
    mcnemar_exact,
    paired_difference,
    wilson,
)


# Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion:
# comparison of seven methods. Statistics in Medicine 17, 857-872. Table II, method 3 (the
# Wilson (1927) score interval without continuity correction), examples (a)-(d).
@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_newcombe_1998_table_ii(k: int, n: int, lo: float, hi: float) -> None:
    got = wilson(k, n)
    assert got[0] == pytest.approx(lo, abs=5e-5)
    assert got[1] == pytest.approx(hi, abs=5e-5)


def test_wilson_closed_form_and_edges() -> None:
    # Wilson (1927): (p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n), z = 1.959964.
    z, k, n = 1.959963984540054, 60, 128
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert wilson(k, n) == pytest.approx((centre - half, centre + half), abs=1e-9)
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(128, 128)[1] == pytest.approx(1.0)
    with pytest.raises(ValueError):
        wilson(3, 2)


# The exact (conditional) McNemar test is the two-sided binomial test of b in b + c at 1/2.
# Fagerland, Lydersen & Laake (2013), "The McNemar test for binary matched-pairs data:
# mid-p and asymptotic are better than exact conditional", BMC Medical Research Methodology
# 13:91, worked example (airway hyper-responsiveness before/after, Bentur et al. 2009):
# discordant pairs 1 and 7, exact conditional p = 0.070 (= 2 * 9/256 = 0.0703125).
def test_mcnemar_fagerland_2013_example() -> None:
    assert mcnemar_exact(1, 7) == pytest.approx(0.0703125, abs=1e-12)
    assert mcnemar_exact(7, 1) == pytest.approx(0.0703125, abs=1e-12)
    assert round(mcnemar_exact(1, 7), 3) == 0.070


def test_mcnemar_small_cases_by_hand() -> None:
    assert mcnemar_exact(0, 0) == 1.0  # no discordant pair: no evidence
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)  # 2 * (1/2)^5
    assert mcnemar_exact(0, 1) == 1.0
    assert mcnemar_exact(3, 3) == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


@given(st.integers(0, 60), st.integers(0, 60))
@settings(max_examples=60, deadline=None)
def test_mcnemar_matches_doubled_tail(b: int, c: int) -> None:
    n = b + c
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n if n else 0.5
    assert mcnemar_exact(b, c) == pytest.approx(min(1.0, 2 * tail), rel=1e-9, abs=1e-12)


# Holm (1979), "A simple sequentially rejective multiple test procedure", Scand. J. Statist.
# 6, 65-70: order the m p-values, compare p_(i) with alpha / (m - i + 1) and stop at the first
# failure. The adjusted p-value of the i-th smallest is max over j <= i of
# min(1, (m - j + 1) p_(j)). Worked by hand for p = (0.01, 0.04, 0.03, 0.005), m = 4:
#   sorted 0.005, 0.01, 0.03, 0.04 -> 4*0.005 = 0.02, 3*0.01 = 0.03, 2*0.03 = 0.06,
#   1*0.04 = 0.04 -> running max 0.06; in input order (0.03, 0.06, 0.06, 0.02).
def test_holm_worked_example() -> None:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_caps_ties_and_empty() -> None:
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])
    assert holm([0.05, 0.05, 0.05]) == pytest.approx([0.15, 0.15, 0.15])
    assert holm([0.05, 0.01]) == pytest.approx([0.05, 0.02])
    assert holm([]) == []


@given(st.lists(st.floats(0, 1), max_size=12))
@settings(max_examples=80, deadline=None)
def test_holm_is_monotone_and_bounded(ps: list[float]) -> None:
    adjusted = holm(ps)
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    seq = [adjusted[i] for i in order]
    assert seq == sorted(seq)
    assert all(p <= a <= 1.0 for p, a in zip(ps, adjusted, strict=True))
    assert all(a <= min(1.0, len(ps) * p) for p, a in zip(ps, adjusted, strict=True))


def test_clustered_wilson_holds_a_full_cell_of_trials() -> None:
    # Issue #49: 12 seeds x 4 trials all successful gave an upper bound of
    # 0.9999999999999999, below the rate 1.0, and `ladder report` crashed on its error bar.
    lo, hi = clustered_wilson([(4, 4)] * 12)
    assert lo <= 1.0 <= hi


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_holds_its_point_estimate(kn: tuple[int, int]) -> None:
    k, n = kn
    lo, hi = wilson(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


_CLUSTER = st.integers(0, 12).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@settings(max_examples=400, deadline=None)
@given(st.lists(_CLUSTER, min_size=1, max_size=40), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_clustered_wilson_holds_its_point_estimate(
    clusters: list[tuple[int, int]], confidence: float
) -> None:
    n = sum(size for _, size in clusters)
    lo, hi = clustered_wilson(clusters, confidence)
    p = sum(k for k, _ in clusters) / n if n else None
    assert 0.0 <= lo <= hi <= 1.0
    if p is not None:
        assert lo <= p <= hi


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 1 / 3, 0.5, 1.0]), min_size=1, max_size=30))
def test_did_interval_holds_its_mean(d: list[float]) -> None:
    lo, hi = did_interval(d, "k", resamples=200)
    mean = sum(d) / len(d)
    assert lo <= mean + 1e-12 and mean - 1e-12 <= hi


# Newcombe (1998), "Improved confidence intervals for the difference between binomial
# proportions based on paired data", Statistics in Medicine 17, 2635-2650, method 10: each
# margin's Wilson interval, squared and added with the correlation phi of the pairs, phi's
# cross-product corrected by n/2 toward 0 when positive (as Fagerland, Lydersen & Laake
# give it, "Statistical Analysis of Contingency Tables", 2017, section 8.5).
def test_paired_difference_by_hand() -> None:
    both, first, second, neither = 1, 1, 7, 12  # Bentur et al. (2009), as above
    n = both + first + second + neither
    p1, p2 = (both + first) / n, (both + second) / n
    (l1, u1), (l2, u2) = wilson(both + first, n), wilson(both + second, n)
    # ad - bc = 12 - 7 = 5, between 0 and n/2 = 10.5: phi is 0
    low = (p1 - p2) - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = (p1 - p2) + math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    assert paired_difference(both, first, second, neither) == pytest.approx((low, high))
    assert low < p1 - p2 < high < 0  # 6 of 8 discordant pairs one way: the interval misses 0
    # a positive correlation narrows it: ad - bc = 400 - 4 > n/2
    wide = paired_difference(0, 2, 2, 0)
    narrow = paired_difference(20, 2, 2, 20)
    assert narrow[1] - narrow[0] < wide[1] - wide[0]


def test_paired_difference_edges() -> None:
    assert paired_difference(0, 0, 0, 0) == (-1.0, 1.0)  # no pair: no information
    low, high = paired_difference(12, 0, 0, 0)  # all concordant: 0 inside
    assert low <= 0.0 <= high
    assert paired_difference(0, 12, 0, 0)[0] > 0  # every pair one way
    assert paired_difference(0, 0, 12, 0)[1] < 0
    low, high = paired_difference(3, 4, 4, 1)  # symmetric discordance: symmetric about 0
    assert low == pytest.approx(-high)
    with pytest.raises(ValueError):
        paired_difference(-1, 0, 0, 0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=4, max_size=4))
def test_paired_difference_holds_its_estimate(cells: list[int]) -> None:
    both, first, second, neither = cells
    n = sum(cells)
    low, high = paired_difference(both, first, second, neither)
    d = (first - second) / n if n else 0.0
    assert -1.0 <= low <= d <= high <= 1.0


# past MCNEMAR_EXACT_MAX pairs a p-value is scipy's (#50, twelfth round: up to it, none imports)
_THREADS = (
    "import os; from scoring.results.stats import mcnemar_exact; p = mcnemar_exact(600, 12); "
    "print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS'), p)"
)


def test_the_p_values_import_starts_no_blas_threads_and_leaves_the_environment() -> None:
    # numpy's first import (scipy's, for the p-values) with OpenBLAS on one thread: its pool
    # spun on a second core while the import ran (#50, ninth round); the variable is gone
    # afterwards (no child inherits it), and a caller's own setting is kept
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    root = Path(__file__).resolve().parents[3]
    run = partial(subprocess.run, [sys.executable, "-c", _THREADS], cwd=root, check=True)
    alone = run(env=env, capture_output=True, text=True).stdout.split()
    assert alone == ["1", "None", repr(mcnemar_exact(600, 12))]
    two = run(env={**env, "OPENBLAS_NUM_THREADS": "2"}, capture_output=True, text=True)
    threads, kept, p = two.stdout.split()
    assert int(threads) > 1 and kept == "2" and p == alone[2]
