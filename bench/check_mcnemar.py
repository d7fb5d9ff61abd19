"""Every (b, c) with ``lo <= b + c <= hi``: the exact McNemar p-value's shortcut
(:func:`scoring.results.stats.mcnemar_exact` up to
:data:`~scoring.results.stats.MCNEMAR_SHORTCUT_MAX` discordant pairs) against scipy's
``binomtest``, bit for bit (#50). About a millisecond per pair on one core: the bound the
shortcut takes was checked with it once (bench/README.md, "Sixth round"); the test suite
checks every pair to 60 and random pairs beyond (tests/scoring/results/test_mcnemar_shortcut.py).

    python -m bench.check_mcnemar 1 500
"""

from __future__ import annotations

import sys
import time

from scipy.stats import binomtest

from scoring.results.stats import _binom_tails, _binomtest_half


def check(lo: int, hi: int) -> tuple[int, int]:
    """(pairs compared, pairs that differ), a line every 50 sizes."""
    tails = _binom_tails()
    if tails is None:
        raise SystemExit("this scipy has no scipy.special._ufuncs._binom_cdf: no shortcut")
    start, pairs, bad = time.monotonic(), 0, 0
    for n in range(max(1, lo), hi + 1):
        for k in range(n + 1):
            want = float(min(1.0, binomtest(k, n, 0.5).pvalue))
            got = 1.0 if 2 * k == n else _binomtest_half(min(k, n - k), n, tails)
            pairs += 1
            if want.hex() != got.hex():
                bad += 1
                print(f"differs: b={k} n={n} scipy={want.hex()} ours={got.hex()}", flush=True)
        if n % 50 == 0:
            print(f"n={n} pairs={pairs} differ={bad} {time.monotonic() - start:.0f}s", flush=True)
    return pairs, bad


if __name__ == "__main__":
    lo, hi = int(sys.argv[1]), int(sys.argv[2])
    pairs, bad = check(lo, hi)
    print(f"{lo}..{hi}: {pairs} pairs, {bad} differ")
    sys.exit(1 if bad else 0)
