"""Counters of an endpoint's calls and its circuit breaker.

The client reports each attempt's outcome here (:meth:`CallStats.failure`,
:meth:`CallStats.succeeded`, :meth:`CallStats.call_failed`);
the live view reads the counters. The breaker: after ``breaker_after`` consecutive failed
attempts on one endpoint (a 429 is throttling, not a failure; a success resets the count)
the next report raises :class:`BreakerTripped`, which ends the run (exit 3) instead of
burning through every episode's retries against a dead server. 0 turns it off.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.visible import one_line

__all__ = ["DEFAULT_BREAKER_AFTER", "BreakerTripped", "CallStats"]

DEFAULT_BREAKER_AFTER = 32  # OURS: ~0.2**32 by chance at a 20 % fault rate


class BreakerTripped(Exception):
    """Too many consecutive failures on one endpoint; the message is one line."""


@dataclass
class CallStats:
    endpoint: str = "endpoint"
    breaker_after: int = 0  # 0: no breaker
    retries: int = 0  # attempts that were retried (429s included)
    throttled_429: int = 0
    failed_attempts: int = 0  # attempts that failed (not 429)
    infrastructure: int = 0  # calls that failed for good (CallFailed)
    consecutive: int = 0
    last_error: str = ""
    other_model: int = 0  # replies whose `model` names another model than asked (#47)

    def failure(self, error: str, *, retry: bool = True) -> None:
        """One failed attempt (``retry``: a retryable one, else the call fails with it);
        may raise :class:`BreakerTripped`."""
        self.retries += retry
        self.infrastructure += not retry
        if error.startswith("429"):
            self.throttled_429 += 1
            return
        self.failed_attempts += 1
        self.consecutive += 1
        self.last_error = one_line(error)  # server text: shown, never obeyed
        if self.breaker_after and self.consecutive >= self.breaker_after:
            raise BreakerTripped(
                f"endpoint {self.endpoint!r}: {self.consecutive} calls in a row failed (last: "
                f"{error}); stopped (rerun to resume once it answers; --breaker-after 0 "
                "turns this off)"
            )

    def answered_by(self, asked: str, said: str | None) -> str | None:
        """Count a reply whose ``model`` names another model than ``asked`` (a dated
        snapshot of it, ``asked-2024-08-06``, is the same model); the warning line the first
        time, else None."""
        if said is None or said == asked or said.startswith(asked + "-"):
            return None
        self.other_model += 1
        if self.other_model > 1:
            return None
        return (
            f"warning: endpoint {self.endpoint!r}: asked for model {one_line(asked, 100)!r}, "
            f"the reply names {one_line(said, 100)!r} (counted; warned once)"
        )

    def succeeded(self) -> None:
        self.consecutive = 0

    def call_failed(self) -> None:
        self.infrastructure += 1
