"""Repeated trials of one episode (``--trials K``, #40): pass^k and the per-seed outcome that
paired tests use.

A cell run with K trials holds K episodes per seed, all of one spec, sampled apart by the
server at the grid's temperature. Its success rate counts every trial (n = seeds x trials);
beside it:

* **pass^k** (tau-bench's, Yao et al. 2024: the chance that k independent trials of one task
  all succeed): for a seed with n counted trials and c successes, C(c, k) / C(n, k) (the
  unbiased estimate from n >= k trials), averaged over the seeds with at least k counted
  trials; k = 1 is the per-trial success rate averaged by seed. A seed with fewer counted
  trials than k (its others ended on infrastructure errors) is left out of pass^k, never read
  as a failure.
* **the seed's majority**: a seed succeeds when more than half of its counted trials do (a
  tie fails). Paired tests (McNemar between arms, between runs) pair seeds by this outcome,
  so each pair stays one independent episode, as with one trial (docs/trials.md).

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from math import comb

__all__ = ["Unit", "majority", "pass_hat_k", "pass_hats"]

# One episode of a cell: (seed, trial); trial 0 is the only one of a run without --trials.
Unit = tuple[int, int]


def pass_hat_k(outcomes: Iterable[Sequence[bool]], k: int) -> float | None:
    """pass^k over seeds, each given as its counted trials' successes; None when no seed
    has ``k`` counted trials."""
    if k < 1:
        raise ValueError(f"pass^k needs k >= 1 (got {k})")
    shares = [
        comb(sum(trials), k) / comb(len(trials), k) for trials in outcomes if len(trials) >= k
    ]
    return sum(shares) / len(shares) if shares else None


def pass_hats(outcomes: Sequence[Sequence[bool]], most: int) -> tuple[float | None, ...]:
    """pass^1 .. pass^most over the same seeds."""
    return tuple(pass_hat_k(outcomes, k) for k in range(1, most + 1))


def majority(trials: Sequence[bool]) -> bool:
    """A seed's outcome from its counted trials: more than half succeeded."""
    return 2 * sum(trials) > len(trials)
