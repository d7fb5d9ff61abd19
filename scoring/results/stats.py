"""Statistics for paired ladder contrasts: Wilson intervals, exact McNemar, Holm.

* :func:`wilson`: the Wilson (1927) score interval without continuity correction, as
  ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")`` gives it; ``n = 0`` gives
  (0, 1). At 95% its closed form is computed here, step for step as scipy computes it, with
  scipy's normal quantile :data:`Z_95` (bit for bit the same bounds, a test pins it over many
  ``(k, n)``): a cell's interval needs no scipy (the viewer's first page, #50).
* :func:`mcnemar_exact`: the exact (conditional) McNemar test (McNemar, 1947) on the
  discordant pairs: a two-sided exact binomial test of ``b`` successes in ``b + c`` trials at
  probability 1/2 (``scipy.stats.binomtest``); no discordant pair gives p = 1. Up to
  :data:`MCNEMAR_SHORTCUT_MAX` pairs it is computed here as scipy computes it at 1/2, without
  scipy's search for the other tail (a symmetric distribution: the tail is the mirror of the
  observed one), from scipy's own binomial cdf and sf (``scipy.special``; ``scipy.stats``
  not imported): the same bits, a test pins every ``(b, c)`` up to a bound (#50). No closed
  form gives scipy's bits: its cdf is not correctly rounded (the exact sum, rounded once,
  differs by an ulp in half the ``(k, n)`` up to 120).
* :func:`holm`: Holm's (1979) step-down adjusted p-values, made monotone in the order of the
  raw p-values and capped at 1, returned in input order.
* :func:`clustered_wilson`: a proportion of turns clustered in episodes: Wilson's interval
  at the effective size ``n / deff``, the design effect ``deff`` (at least 1) the ratio of the
  cluster-robust variance of the ratio estimator to the binomial variance (Kish 1965; the
  effective-size Wilson interval of Korn and Graubard 1998).
* :func:`paired_difference`: the difference of two paired proportions (pairs ``both``,
  ``first`` only, ``second`` only, ``neither``), ``(first - second) / n``, with Newcombe's
  (1998) hybrid score interval for paired data (his method 10): each margin's Wilson
  interval, squared and added with the pairs' correlation phi, its cross-product
  ``ad - bc`` moved ``n / 2`` toward 0 when positive (as Fagerland, Lydersen and Laake give
  it, 2017, section 8.5); no pair gives (-1, 1).
* :func:`sign_flip_p`: a paired sign-flip permutation test of a mean difference of 0 (Fisher
  1935), exact over the nonzero differences up to :data:`EXACT_SEEDS` of them, else
  :data:`PERMUTATIONS` draws from a generator seeded by the caller's key (#46).


Every interval holds its point estimate ``k / n`` (:func:`containing`): floating-point
rounding of the closed forms may not move a bound past it.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import operator
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from statistics import NormalDist
from typing import Any

_LOADED = [False]  # what the p-values need imported (by preload_stats or a first use)


def binomtest(k: int, n: int, p: float = 0.5) -> Any:
    """scipy's exact binomial test, imported on first use (keeps ``ladder`` start-up fast)."""
    with _one_blas_thread():
        from scipy.stats import binomtest as scipy_binomtest

    _LOADED[0] = True
    return scipy_binomtest(k, n, p)


def _binom_tails() -> tuple[Any, Any] | None:
    """scipy's binomial cdf and sf (``scipy.special``: the functions ``scipy.stats.binom``
    calls), imported on first use; a quarter of the CPU of importing ``scipy.stats``. None
    where this scipy keeps them elsewhere (older ones: ``scipy.stats._boost``):
    its ``binomtest`` answers."""
    with _one_blas_thread():
        from scipy.special import _ufuncs

    cdf, sf = getattr(_ufuncs, "_binom_cdf", None), getattr(_ufuncs, "_binom_sf", None)
    if cdf is None or sf is None:
        return None
    _LOADED[0] = True
    return cdf, sf


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """numpy's first import (scipy's) with its OpenBLAS on one thread, where the caller's
    environment does not say how many: no p-value needs BLAS, and its pool's other thread
    spun on a second core for as long as the import ran (#50, ninth round: the import's CPU
    0.23 s -> 0.12 s, taken from ``ladder score``'s workers on two cores). OpenBLAS reads
    the variable when it loads; it is removed again, so no process started later inherits
    it. Nothing is changed where numpy is in already."""
    if "numpy" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        yield
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        os.environ.pop("OPENBLAS_NUM_THREADS", None)


def preload_stats() -> None:
    """Import what the contrasts' p-values need now (a caller with idle time before its
    first contrast): scipy's binomial functions. ``scipy.stats`` itself is imported only by
    a p-value beyond :data:`MCNEMAR_SHORTCUT_MAX` discordant pairs or an interval at a level
    other than 95% (#50: the parent process of the viewer's index and of ``ladder score``
    imported all of it, about 0.9 s of CPU, while its workers scored)."""
    if _binom_tails() is None:  # a scipy without them: binomtest answers, scipy.stats it is
        with _one_blas_thread():
            import scipy.stats  # noqa: F401

        _LOADED[0] = True


def stats_loaded() -> bool:
    """Whether what the contrasts' p-values need is in (its import done, by
    :func:`preload_stats` or a first p-value): a caller that must not wait on the import asks
    first (the viewer's page while its index fills, #50). Only a finished import counts: a
    module is in ``sys.modules`` from the moment its import starts."""
    return _LOADED[0]


__all__ = [
    "EXACT_SEEDS",
    "MCNEMAR_SHORTCUT_MAX",
    "PERMUTATIONS",
    "clustered_wilson",
    "containing",
    "holm",
    "mcnemar_exact",
    "paired_difference",
    "preload_stats",
    "sign_flip_p",
    "stats_loaded",
    "wilson",
]

# scipy.special.ndtri(0.975), the two-sided 95% normal quantile scipy's Wilson interval uses,
# bit for bit (statistics.NormalDist().inv_cdf(0.975) is 2 ulp below it); its square, as
# scipy's ``z**2`` rounds it.
Z_95 = float.fromhex("0x1.f5c0331eeff84p+0")
Z_95_SQUARED = Z_95 * Z_95


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for ``k`` successes in ``n`` trials."""
    k, n = operator.index(k), operator.index(n)
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n (got k={k}, n={n})")
    if n == 0:
        return (0.0, 1.0)
    if confidence == 0.95:
        low, high = _wilson_95(k, n)
    else:
        ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
        low, high = float(ci.low), float(ci.high)
    return containing(k / n, max(0.0, low), min(1.0, high))


def _wilson_95(k: int, n: int) -> tuple[float, float]:
    """scipy's two-sided Wilson bounds at 95% (``_binom_wilson_conf_int`` without
    correction), the same operations in the same order on the same doubles: the same bits."""
    p = k / n
    denom = 2 * (n + Z_95_SQUARED)
    center = (2 * n * p + Z_95_SQUARED) / denom
    q = 1 - p
    delta = Z_95 / denom * math.sqrt(4 * n * p * q + Z_95_SQUARED)
    low = 0.0 if k == 0 else center - delta
    high = 1.0 if k == n else center + delta
    return low, high


# OURS: up to this many discordant pairs the McNemar p-value takes the shortcut
# (:func:`_binomtest_half`): every (b, c) up to here compared bit for bit with scipy's binomtest
# (``python -m bench.check_mcnemar 1 500``, bench/README.md; the tests check every pair to 60
# and random ones to here, tests/scoring/results/test_mcnemar_shortcut.py); the paper's
# cells pair at most 128 seeds, the bench's 234. Beyond it, scipy's binomtest.
MCNEMAR_SHORTCUT_MAX = 500


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0 (got {b}, {c})")
    n = b + c
    if n == 0 or b == c:
        return 1.0  # scipy's binomtest gives 1.0 at k == n / 2 (its own shortcut)
    tails = _binom_tails() if n <= MCNEMAR_SHORTCUT_MAX else None
    if tails is not None:
        return _binomtest_half(min(b, c), n, tails)
    return float(min(1.0, binomtest(b, n, 0.5).pvalue))


def _binomtest_half(m: int, n: int, tails: tuple[Any, Any]) -> float:
    """scipy's two-sided binomtest p-value of ``m < n / 2`` successes (or, by symmetry,
    ``n - m``) in ``n`` trials at 1/2: ``P(X <= m) + P(X >= n - m)``, the sum scipy returns,
    of the same two numbers (its binomial distribution's cdf and sf, which call these
    functions, clipped to [0, 1]), added in the same order. scipy searches the far tail for
    the terms no likelier than the observed one; at 1/2 they are those from ``n - m`` on
    (the mirror of ``m``), which the test of every ``(m, n)`` up to
    :data:`MCNEMAR_SHORTCUT_MAX` confirms. ``tails``: :func:`_binom_tails`."""
    binom_cdf, binom_sf = tails
    cdf = min(1.0, max(0.0, float(binom_cdf(float(m), float(n), 0.5))))
    sf = min(1.0, max(0.0, float(binom_sf(float(n - m - 1), float(n), 0.5))))
    return min(1.0, cdf + sf)


def paired_difference(
    both: int, first: int, second: int, neither: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Newcombe's interval for ``(first - second) / n``, the first proportion less the
    second over ``n`` pairs: ``both`` succeed in both, ``first`` in the first only, and so
    on (module docstring)."""
    if min(both, first, second, neither) < 0:
        raise ValueError("pair counts must be >= 0")
    n = both + first + second + neither
    if n == 0:
        return (-1.0, 1.0)
    p1, p2 = (both + first) / n, (both + second) / n
    (l1, u1), (l2, u2) = wilson(both + first, n, confidence), wilson(both + second, n, confidence)
    margins = (both + first) * (second + neither) * (both + second) * (first + neither)
    cross = both * neither - first * second
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    else:
        phi = (cross - n / 2 if cross > 0 else cross) / math.sqrt(margins)
    a, b = p1 - l1, u2 - p2
    c, d = p2 - l2, u1 - p1
    low = (p1 - p2) - math.sqrt(max(0.0, a * a - 2 * phi * a * b + b * b))
    high = (p1 - p2) + math.sqrt(max(0.0, c * c - 2 * phi * c * d + d * d))
    return containing(p1 - p2, max(-1.0, low), min(1.0, high))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def clustered_wilson(
    clusters: Sequence[tuple[int, int]], confidence: float = 0.95
) -> tuple[float, float]:
    """The Wilson interval of ``sum k / sum n`` over clusters ``(k, n)`` (e.g. an episode's
    turns), at the effective sample size ``n / deff``; one cluster, or p at 0 or 1: deff 1."""
    if any(not 0 <= k <= n for k, n in clusters):
        raise ValueError("need 0 <= k <= n in every cluster")
    n = sum(c[1] for c in clusters)
    if n == 0:
        return (0.0, 1.0)
    p = sum(c[0] for c in clusters) / n
    m = sum(1 for c in clusters if c[1])
    deff = 1.0
    if m > 1 and 0 < p < 1:
        robust = m / (m - 1) * sum((k - p * size) ** 2 for k, size in clusters) / n**2
        deff = max(1.0, robust / (p * (1 - p) / n))
    n_eff = n / deff
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    denom = 1 + z * z / n_eff
    centre = (p + z * z / (2 * n_eff)) / denom
    half = z * math.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff * n_eff)) / denom
    return containing(p, max(0.0, centre - half), min(1.0, centre + half))


def containing(p: float, low: float, high: float) -> tuple[float, float]:
    """``(low, high)`` widened to hold the point estimate ``p``: the closed-form bounds round
    (a 48/48 cell's upper bound came out 0.9999999999999999, below its rate of 1.0, and the
    report's error bars refused a negative length)."""
    return (min(low, p), max(high, p))


EXACT_SEEDS = 16  # OURS: up to this many nonzero differences the permutation test is exact
PERMUTATIONS = 20000  # OURS: seeded sign-flip draws beyond it


def sign_flip_p(d: Sequence[float], key: str) -> float:
    """Two-sided p of a paired sign-flip permutation test of mean ``d`` = 0: exact over the
    nonzero differences up to :data:`EXACT_SEEDS` of them, else :data:`PERMUTATIONS`
    draws from a generator seeded by ``key``."""
    import numpy as np  # on first use (keeps ``ladder`` start-up fast)

    x = np.asarray([v for v in d if v != 0], dtype=float)
    if x.size == 0:
        return 1.0
    observed = abs(x.sum()) - 1e-12
    if x.size <= EXACT_SEEDS:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=x.size)))
    else:
        seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
        signs = np.random.default_rng(seed).choice((1.0, -1.0), size=(PERMUTATIONS, x.size))
    return float(np.mean(np.abs(signs @ x) >= observed))
