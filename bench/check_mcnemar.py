"""Every (b, c) with ``lo <= b + c <= hi``: the exact McNemar p-value
(:func:`scoring.results.stats.mcnemar_exact`, the exact fraction rounded once up to
:data:`~scoring.results.stats.MCNEMAR_EXACT_MAX` discordant pairs) against scipy's
``binomtest``, which computed it before #50's twelfth round: how many differ in any bit, and
the largest relative difference (over 1e-13 fails). About a millisecond per pair on one core
(scipy's side); the tests check every pair to 60 and random pairs beyond
(tests/scoring/results/test_mcnemar_exact.py).

    python -m bench.check_mcnemar 1 500
"""

from __future__ import annotations

import sys
import time

from scipy.stats import binomtest

from scoring.results.stats import mcnemar_exact

TOLERANCE = 1e-13  # relative: far below the 3 significant digits a p-value is printed with


def check(lo: int, hi: int) -> tuple[int, int, float]:
    """(pairs compared, pairs that differ in some bit, the largest relative difference), a
    line every 50 sizes."""
    start, pairs, differ, worst = time.monotonic(), 0, 0, 0.0
    for n in range(max(1, lo), hi + 1):
        for k in range(n + 1):
            want = float(min(1.0, binomtest(k, n, 0.5).pvalue))
            got = mcnemar_exact(k, n - k)
            pairs += 1
            if want != got:
                differ += 1
                worst = max(worst, abs(got - want) / got)
        if n % 50 == 0:
            print(
                f"n={n} pairs={pairs} differ={differ} worst={worst:.3g} "
                f"{time.monotonic() - start:.0f}s",
                flush=True,
            )
    return pairs, differ, worst


if __name__ == "__main__":
    lo, hi = int(sys.argv[1]), int(sys.argv[2])
    pairs, differ, worst = check(lo, hi)
    print(f"{lo}..{hi}: {pairs} pairs, {differ} differ in some bit, the largest by {worst:.3g}")
    sys.exit(1 if worst > TOLERANCE else 0)
