"""Parsing seed ranges such as ``100-227`` or ``100,105,110-115``."""

from __future__ import annotations

__all__ = ["MAX_SEED", "MAX_SEEDS", "count_seeds", "format_seeds", "parse_seeds"]


MAX_SEED = 2**63 - 1  # seeds are logged as signed 64-bit integers
MAX_SEEDS = 1_000_000  # seeds in one grid: 7,800 times the paper's 128 (docs/security.md)


def _ranges(text: str) -> list[range]:
    """The ranges of ``text``, checked (bounds, order) without expanding them."""
    out: list[range] = []
    for item in text.split(","):
        item = item.strip()
        lo, sep, hi = item.partition("-")
        try:
            a, b = (int(lo), int(hi)) if sep else (int(item), int(item))
            if b < a or len(lo) > 20 or len(hi) > 20:
                raise ValueError
        except ValueError:
            raise ValueError(  # within 80 columns after "error: command line: " (#49)
                f"malformed seed range {text[:24]!r}: want N, N-M (N <= M) or N,M"
            ) from None
        if a < 0 or b > MAX_SEED:
            raise ValueError(f"malformed seed range {text[:80]!r}: seeds lie in 0..2^63-1")
        out.append(range(a, b + 1))
    return out


def count_seeds(text: str) -> int:
    """How many seeds ``text`` names (repeats counted), without listing them."""
    return sum(len(r) for r in _ranges(text))


def parse_seeds(text: str) -> list[int]:
    """``"100-227"`` -> [100, ..., 227]; comma-separated items; raises ValueError clearly
    (a seed outside 0..2^63-1, more than :data:`MAX_SEEDS` seeds: counted before listing)."""
    ranges = _ranges(text)
    n = sum(len(r) for r in ranges)
    if n > MAX_SEEDS:
        raise ValueError(f"seed range {text[:80]!r} names {n} seeds; at most {MAX_SEEDS}")
    return list(dict.fromkeys(s for r in ranges for s in r))


def format_seeds(seeds: list[int]) -> str:
    """The inverse of :func:`parse_seeds`: runs of consecutive seeds as ``N-M``."""
    parts: list[str] = []
    i = 0
    while i < len(seeds):
        j = i
        while j + 1 < len(seeds) and seeds[j + 1] == seeds[j] + 1:
            j += 1
        parts.append(str(seeds[i]) if i == j else f"{seeds[i]}-{seeds[j]}")
        i = j + 1
    return ",".join(parts)
