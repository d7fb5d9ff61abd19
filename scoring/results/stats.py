"""Statistics for paired ladder contrasts: Wilson intervals, exact McNemar, Holm.

* :func:`wilson`: the Wilson (1927) score interval without continuity correction, as
  ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")`` gives it; ``n = 0`` gives
  (0, 1). At 95% its closed form is computed here, step for step as scipy computes it, with
  scipy's normal quantile :data:`Z_95` (bit for bit the same bounds, a test pins it over many
  ``(k, n)``): a cell's interval needs no scipy (the viewer's first page, #50).
* :func:`mcnemar_exact`: the exact (conditional) McNemar test (McNemar, 1947) on the
  discordant pairs: a two-sided exact binomial test of ``b`` successes in ``b + c`` trials at
  probability 1/2 (``scipy.stats.binomtest``); no discordant pair gives p = 1. Up to
  :data:`MCNEMAR_EXACT_MAX` pairs it is computed exactly, without scipy (OURS, #50, twelfth
  round): ``2 * sum(comb(n, k) for k <= min(b, c)) / 2**n`` in integers, divided once
  (Python's integer division is correctly rounded), which is the p-value binomtest defines
  at 1/2 (its far tail, the terms no likelier than the observed one, is the mirror of the
  near one), rounded once. scipy's own figure (Boost's incomplete beta) is within 1e-13 of
  it, relative, up to that bound (a test pins it): a p-value printed to 3 significant
  digits moves only within 1e-13 of a rounding edge. Past it, scipy's ``binomtest`` itself.
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


def binomtest(k: int, n: int, p: float = 0.5) -> Any:
    """scipy's exact binomial test, imported on first use (keeps ``ladder`` start-up fast;
    the contrasts' p-values up to :data:`MCNEMAR_EXACT_MAX` pairs never import it)."""
    with _one_blas_thread():
        from scipy.stats import binomtest as scipy_binomtest

    return scipy_binomtest(k, n, p)


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


__all__ = [
    "EXACT_SEEDS",
    "MCNEMAR_EXACT_MAX",
    "PERMUTATIONS",
    "clustered_wilson",
    "containing",
    "holm",
    "mcnemar_exact",
    "paired_difference",
    "sign_flip_p",
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


# OURS: up to this many discordant pairs the McNemar p-value is computed exactly here
# (:func:`_mcnemar_half`; about 10 microseconds at 234 pairs, 30 at 500); the paper's cells pair
# at most 128 seeds, the bench's 234. Beyond it, scipy's binomtest (every (b, c) up to here
# compared with it: ``python -m bench.check_mcnemar 1 500``, bench/README.md; the tests
# check every pair to 60 and random ones to here, tests/scoring/results/test_mcnemar_exact.py).
MCNEMAR_EXACT_MAX = 500


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0 (got {b}, {c})")
    n = b + c
    if n == 0 or b == c:
        return 1.0  # every outcome is as likely as the observed one or less
    if n <= MCNEMAR_EXACT_MAX:
        return _mcnemar_half(min(b, c), n)
    return float(min(1.0, binomtest(b, n, 0.5).pvalue))


def _mcnemar_half(m: int, n: int) -> float:
    """The two-sided exact binomial p-value of ``m < n / 2`` successes (or, by symmetry,
    ``n - m``) in ``n`` trials at 1/2: ``P(X <= m) + P(X >= n - m)``, twice the near tail,
    as the exact fraction ``2 * sum(comb(n, k) for k <= m) / 2**n`` rounded once (Python's
    ``int / int`` is correctly rounded; 1 for an odd ``n`` and ``m = (n - 1) / 2``, where the
    two tails are every outcome)."""
    total, term = 0, 1
    for k in range(m + 1):  # comb(n, k) from comb(n, k - 1): exact, one product a term
        total += term
        term = term * (n - k) // (k + 1)
    return min(1.0, 2 * total / (1 << n))


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
