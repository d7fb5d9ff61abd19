"""Draw keys: the scripted agents' dice, keyed by (seed, turn, call, trial) and a purpose.

OURS (issue #46): a scripted agent's random choice on one turn is drawn from the episode's
seed, the turn it answers, the call within the turn, the trial and the choice's purpose,
never from a hash of the prompt. Two cells of one seed (a control and a stressed cell, or two
arms) then roll the same dice on every turn, so they differ only where the knob differs and
in what follows from the agent's own state there (paired by construction; docs/scoring.md).

The runner sends the key with each agent request in the header :data:`DRAW_HEADER`
(``seed=100;turn=p12;call=0;trial=0``); ``turn`` is ``p<planned index>`` for a planned turn
(a stressed turn keeps the index of the planned turn it stands for) and ``d<n>`` for the
episode's n-th dynamic re-ask (``n<k>``: the handoff note that closes session ``k - 1``, the
sessions knob, issue #48); ``call`` counts the agent's calls within the turn (1: the
same-turn retry after a notice). A request without the header (a client other than the
runner) is drawn from its prompt's hash, as before.

Beside it the runner sends :data:`LINEAGE_HEADER` (OURS, issue #48): an opaque random token
per episode run (cell x seed x trial; it carries no state and names nothing), the same on
every agent request of a run whose episode restarts (the sessions knob; one session has no
sessions to join, and sends none). The embedded endpoint's perfect agent keys its memory of its
own earlier sessions of the episode by it, as a deployed agent with a memory store keys it by
a conversation or user id (docs/semantics.md, "The oracle remembers"); every other policy,
and a request without it, ignores it.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["DRAW_HEADER", "LINEAGE_HEADER", "draw_key", "parse_draw", "parse_lineage", "uniform"]

DRAW_HEADER = "X-State-Ladder-Draw"  # OURS
_KEY = re.compile(r"seed=(-?\d{1,19});turn=([pdn]\d{1,6});call=(\d{1,3});trial=(\d{1,6})")
MAX_KEY_BYTES = 80
LINEAGE_HEADER = "X-State-Ladder-Episode"  # OURS (issue #48)
_LINEAGE = re.compile(r"[0-9a-f]{16,64}")


def draw_key(seed: int, turn: str, call: int, trial: int) -> str:
    """The header's value for one agent call."""
    return f"seed={seed};turn={turn};call={call};trial={trial}"


def parse_draw(value: str) -> str | None:
    """``value`` when it is a well-formed draw key (bounded, one regex match), else None."""
    if len(value) > MAX_KEY_BYTES or _KEY.fullmatch(value) is None:
        return None
    return value


def parse_lineage(value: str) -> str | None:
    """``value`` when it is a well-formed lineage token (16 to 64 lowercase hex digits)."""
    return value if len(value) <= 64 and _LINEAGE.fullmatch(value) is not None else None


def uniform(key: str, purpose: str) -> float:
    """A uniform number in [0, 1) that is a function of ``key`` and ``purpose`` alone."""
    h = hashlib.blake2b(f"{key}|{purpose}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "big") / 2.0**64
