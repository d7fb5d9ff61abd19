"""The ceilings of the command line's numbers (#47, OURS): every int or float option of
every command has one (tests/ladder/test_every_option_bounded.py walks them), far above any
real use, so a hostile or mistyped value is one ``error:`` line, exit 2, never a traceback,
a gigabyte or a sleep of 10^300 seconds. ``ladder run``'s grid flags are the grid's
ceilings (runner.grid.ceilings); the scripted endpoint's are serve.options'.
docs/security.md lists them."""

from __future__ import annotations

from serve.options import MAX_IN_FLIGHT, MAX_SEED

__all__ = [
    "MAX_ATTEMPTS",
    "MAX_IN_FLIGHT",
    "MAX_JOBS",
    "MAX_LISTED",
    "MAX_RATE",
    "MAX_SAMPLES",
    "MAX_SEED",
    "MAX_TEMPERATURE",
    "MAX_TIER",
    "MAX_TOP_K",
    "MAX_TRIALS_SHOWN",
    "MAX_VERSION",
]

MAX_ATTEMPTS = 100  # tries of a request or a rewrite (the grid's decoding.attempts)
MAX_JOBS = 1_024  # processes rescoring a run
MAX_LISTED = 10**9  # a count of episodes, trap turns or failures in a row
MAX_RATE = 1e9  # tokens per second of an estimate's GPU (a fast one does some 10^5)
MAX_SAMPLES = 10_000  # sampled re-asks per variant and trap
MAX_TEMPERATURE = 100.0  # the grid's decoding.temperature
MAX_TIER = 100  # a paraphrase tier (the generator knows 0, 1 and 2: its own line)
MAX_TOP_K = 1_000_000  # a vocabulary's size
MAX_TRIALS_SHOWN = 1_000  # a trial's index (runner.grid.checks.MAX_TRIALS)
MAX_VERSION = 1_000  # a generator version (the generator knows its own: its own line)
