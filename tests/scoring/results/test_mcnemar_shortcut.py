"""The exact McNemar p-value without scipy's binomtest is binomtest's, bit for bit (#50): the
parent process of ``ladder score`` and of the viewer's index computes every contrast's p-value,
and no printed p-value or Holm decision moves."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from scoring.results import stats


def _scipy(b: int, c: int) -> str:
    """The p-value as :func:`scoring.results.stats.mcnemar_exact` computed it before: scipy's
    two-sided binomtest at 1/2, capped at 1 (as hex: every bit compared)."""
    if b + c == 0:
        return (1.0).hex()
    return float(min(1.0, binomtest(b, b + c, 0.5).pvalue)).hex()


def _ours(b: int, c: int) -> str:
    return stats.mcnemar_exact(b, c).hex()


def test_every_contrast_up_to_60_discordant_pairs_is_scipys() -> None:
    # every (b, c) with b + c <= 60 here; up to MCNEMAR_SHORTCUT_MAX by the script the
    # bench README names (bench/README.md, "Sixth round: the parent's share")
    for n in range(61):
        for b in range(n + 1):
            assert _ours(b, n - b) == _scipy(b, n - b), (b, n - b)


@settings(max_examples=400, deadline=None)
@given(
    st.integers(1, stats.MCNEMAR_SHORTCUT_MAX).flatmap(
        lambda n: st.tuples(st.integers(0, n), st.just(n))
    )
)
def test_any_contrast_the_shortcut_takes_is_scipys(bn: tuple[int, int]) -> None:
    b, n = bn
    assert _ours(b, n - b) == _scipy(b, n - b)


@settings(max_examples=100, deadline=None)
@given(
    st.integers(stats.MCNEMAR_SHORTCUT_MAX + 1, 10**6).flatmap(
        lambda n: st.tuples(st.integers(0, n), st.just(n))
    )
)
def test_beyond_the_shortcut_scipy_answers(bn: tuple[int, int]) -> None:
    b, n = bn
    assert _ours(b, n - b) == _scipy(b, n - b)


def test_the_edges_of_the_shortcut() -> None:
    top = stats.MCNEMAR_SHORTCUT_MAX
    for b, c in [(0, 1), (1, 0), (0, top), (top, 0), (1, top - 1), (top // 2, top - top // 2)]:
        assert _ours(b, c) == _scipy(b, c), (b, c)
    for b, c in [(0, top + 1), (top + 1, 0), (1, top), (top // 2, top // 2 + 1)]:
        assert _ours(b, c) == _scipy(b, c), (b, c)


def test_a_scipy_without_the_functions_answers_with_binomtest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # an older scipy keeps the binomial functions elsewhere: binomtest itself answers
    monkeypatch.setattr(stats, "_binom_tails", lambda: None)
    for b, c in [(0, 1), (3, 9), (17, 40), (120, 114)]:
        assert _ours(b, c) == _scipy(b, c), (b, c)
    monkeypatch.undo()
    assert stats._binom_tails() is not None  # this scipy has them: the shortcut is taken
