"""The exact McNemar p-value up to :data:`~scoring.results.stats.MCNEMAR_EXACT_MAX`
discordant pairs is the exact fraction the test defines, rounded once, and imports nothing
(#50, twelfth round); scipy's binomtest, which computed it before, is within 1e-13 of it
(relative), so no printed p-value moves; beyond the bound scipy's binomtest answers, bit for
bit."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from scoring.results import stats
from tests.fresh_imports import imported_after, of_packages

TOP = stats.MCNEMAR_EXACT_MAX


def _exact(b: int, c: int) -> float:
    """The two-sided exact binomial p-value at 1/2 from its definition: the probability of
    every outcome no likelier than the observed one, as a fraction, rounded once."""
    n = b + c
    if n == 0:
        return 1.0
    pmf = [math.comb(n, k) for k in range(n + 1)]
    tail = sum(p for p in pmf if p <= pmf[b])
    return float(min(Fraction(1), Fraction(tail, 2**n)))


def _scipy(b: int, c: int) -> float:
    """scipy's two-sided binomtest at 1/2, capped at 1 (the p-value before #50's twelfth
    round)."""
    if b + c == 0:
        return 1.0
    return float(min(1.0, binomtest(b, b + c, 0.5).pvalue))


def _pairs(lo: int, hi: int) -> st.SearchStrategy[tuple[int, int]]:
    """(b, c) with lo <= b + c <= hi."""
    return (
        st.integers(lo, hi)
        .flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))
        .map(lambda bn: (bn[0], bn[1] - bn[0]))
    )


def test_every_contrast_up_to_60_discordant_pairs_is_the_exact_fraction() -> None:
    for n in range(61):
        for b in range(n + 1):
            got = stats.mcnemar_exact(b, n - b)
            assert got.hex() == _exact(b, n - b).hex(), (b, n - b)
            assert math.isclose(got, _scipy(b, n - b), rel_tol=1e-13, abs_tol=0), (b, n - b)


@settings(max_examples=400, deadline=None)
@given(_pairs(1, TOP))
def test_any_contrast_up_to_the_bound_is_the_exact_fraction_near_scipys(
    bc: tuple[int, int],
) -> None:
    b, c = bc
    got = stats.mcnemar_exact(b, c)
    assert got.hex() == _exact(b, c).hex()
    assert math.isclose(got, _scipy(b, c), rel_tol=1e-13, abs_tol=0)


@settings(max_examples=100, deadline=None)
@given(_pairs(TOP + 1, 10**6))
def test_beyond_the_bound_scipy_answers(bc: tuple[int, int]) -> None:
    b, c = bc
    assert stats.mcnemar_exact(b, c).hex() == _scipy(b, c).hex()


def test_the_edges_of_the_bound_and_known_values() -> None:
    for b, c in [(0, 1), (1, 0), (0, TOP), (TOP, 0), (1, TOP - 1), (TOP // 2, TOP - TOP // 2)]:
        assert stats.mcnemar_exact(b, c).hex() == _exact(b, c).hex(), (b, c)
    for b, c in [(0, TOP + 1), (TOP + 1, 0), (1, TOP), (TOP // 2, TOP // 2 + 1)]:
        assert stats.mcnemar_exact(b, c).hex() == _scipy(b, c).hex(), (b, c)
    # by hand: 2 * (1 + 10) / 2**10; one pair either way is every outcome; ties give 1
    assert stats.mcnemar_exact(1, 9) == stats.mcnemar_exact(9, 1) == 22 / 1024
    assert (
        stats.mcnemar_exact(0, 1) == stats.mcnemar_exact(3, 4) == stats.mcnemar_exact(5, 5) == 1.0
    )
    assert stats.mcnemar_exact(0, TOP) == 2.0 ** -(TOP - 1)


def test_a_p_value_up_to_the_bound_imports_no_scipy_or_numpy() -> None:
    code = (
        "from scoring.results.stats import mcnemar_exact\n"
        f"assert mcnemar_exact(30, 12).hex() == {_exact(30, 12).hex()!r}\n"
        f"assert mcnemar_exact(0, {TOP}).hex() == {_exact(0, TOP).hex()!r}\n"
    )
    assert of_packages(imported_after(code), "scipy", "numpy") == []
