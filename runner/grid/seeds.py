"""Parsing seed ranges such as ``100-227`` or ``100,105,110-115``."""

from __future__ import annotations

__all__ = ["format_seeds", "parse_seeds"]


def parse_seeds(text: str) -> list[int]:
    """``"100-227"`` -> [100, ..., 227]; comma-separated items; raises ValueError clearly."""
    seeds: list[int] = []
    for item in text.split(","):
        item = item.strip()
        lo, sep, hi = item.partition("-")
        try:
            if sep:
                a, b = int(lo), int(hi)
                if b < a:
                    raise ValueError
                seeds.extend(range(a, b + 1))
            else:
                seeds.append(int(item))
        except ValueError:
            raise ValueError(
                f"malformed seed range {text!r}: use N, N-M (N <= M) or a comma-separated list"
            ) from None
    if any(s < 0 for s in seeds):
        raise ValueError(f"malformed seed range {text!r}: seeds are non-negative")
    return list(dict.fromkeys(seeds))


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
