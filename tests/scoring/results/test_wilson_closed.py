"""The 95% Wilson interval computed without scipy is scipy's, bit for bit (#50): a cell's
interval imports nothing (``ladder score``, the viewer's pages), and no printed number moves."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtri
from scipy.stats import binomtest

from scoring.results import stats
from tests.fresh_imports import imported_after, of_packages


def _scipy(k: int, n: int, confidence: float = 0.95) -> tuple[str, str]:
    """The interval as :func:`scoring.results.stats.wilson` computed it before: scipy's
    bounds, clamped to [0, 1] and widened to hold k / n (as hex: every bit compared)."""
    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    low, high = stats.containing(k / n, max(0.0, float(ci.low)), min(1.0, float(ci.high)))
    return low.hex(), high.hex()


def _ours(k: int, n: int, confidence: float = 0.95) -> tuple[str, str]:
    low, high = stats.wilson(k, n, confidence)
    return low.hex(), high.hex()


def test_the_quantile_is_scipys() -> None:
    assert float(ndtri(0.5 + 0.5 * 0.95)) == stats.Z_95
    assert float(ndtri(0.5 + 0.5 * 0.95) ** 2) == stats.Z_95_SQUARED
    assert stats.Z_95.hex() == float(ndtri(0.975)).hex()


def test_every_cell_up_to_60_episodes_is_scipys() -> None:
    for n in range(1, 61):
        for k in range(n + 1):
            assert _ours(k, n) == _scipy(k, n), (k, n)


@settings(max_examples=800, deadline=None)
@given(st.integers(1, 10**8).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_any_cell_is_scipys(kn: tuple[int, int]) -> None:
    k, n = kn
    assert _ours(k, n) == _scipy(k, n)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.sampled_from([0.5, 0.8, 0.9, 0.99, 0.999]),
)
def test_other_levels_still_ask_scipy(kn: tuple[int, int], confidence: float) -> None:
    k, n = kn
    assert _ours(k, n, confidence) == _scipy(k, n, confidence)


def test_a_cells_interval_imports_no_scipy() -> None:
    intervals = (stats.wilson(81, 263), stats.wilson(0, 20), stats.wilson(20, 20))
    code = (
        "from scoring.results.cells import cell_line\n"
        "from scoring.results.stats import wilson\n"
        f"assert (wilson(81, 263), wilson(0, 20), wilson(20, 20)) == {intervals!r}\n"
    )
    assert of_packages(imported_after(code), "scipy") == []
