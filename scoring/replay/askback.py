"""The user's burden under the ask-back knobs (issue #38; ours, docs/askback.md), pure.

Per episode of a cell with ``show``, ``ask`` or ``escalate`` on, read from its logged turns:

* ``questions``: turns on which the gate asked the user back; ``escalations``: refused
  bookings the gate put to the user; ``overrides``: of them, the ones the user confirmed (each
  a correct booking the gate would have refused, admitted once);
* ``recovered``: question turns whose first reading missed the turn's intended step (a
  misroute, no step, a malformed reply) and whose reading after the user's answer names it;
  ``unrecovered``: question turns whose reading after the answer still misses it;
* ``extra_matcher_calls``, ``extra_tokens`` and ``extra_s``: the matcher calls the ask knob
  needed (the second reading on every routed turn, and the reading of each answer;
  ``TurnRecord.askback_calls``), made or served from the cache, so the count does not depend
  on which cell ran first (``ladder cost``'s "required"); their tokens as the arm needs them
  (a served call keeps the tokens of the request that made it, as ``helper_tokens``); and the
  seconds the requests this episode made spent waiting and at the server.

The intended step is the turn's step on a request (None on a turn that asks for no step);
on an ambiguous probe the user's answer resolved, the step it meant (issue #46), so a probe
whose first reading named no step and whose reading of the answer names the meant step is
recovered.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from protocol.arms.askback import answered_step, requested_steps
from protocol.episode.generate import generate
from protocol.records import EpisodeRecord, Knobs, TurnRecord

__all__ = ["Burden", "askback_on", "burden_of", "burden_text", "per_recovery"]


class Burden(msgspec.Struct, frozen=True, kw_only=True):
    questions: int = 0
    escalations: int = 0
    overrides: int = 0
    recovered: int = 0
    unrecovered: int = 0
    extra_matcher_calls: int = 0
    extra_tokens: int = 0
    extra_s: float = 0.0

    def __add__(self, other: Burden) -> Burden:
        return Burden(**{f: getattr(self, f) + getattr(other, f) for f in Burden.__struct_fields__})

    @property
    def asked(self) -> int:
        """What the user was asked: questions and escalations."""
        return self.questions + self.escalations

    @property
    def recoveries(self) -> int:
        """What the asking bought: misreadings recovered and correct bookings overridden."""
        return self.recovered + self.overrides


def askback_on(knobs: Knobs) -> bool:
    return knobs.show or knobs.ask != "off" or knobs.escalate


def _intended(t: TurnRecord, meant: str | None) -> str | None:
    if meant is not None:  # an ambiguous probe the user's answer resolved (#46)
        return meant
    steps = requested_steps(t.as_turn())
    return steps[0] if len(steps) == 1 else None


def burden_of(record: EpisodeRecord, answered: Sequence[str | None] = ()) -> Burden | None:
    """The episode's burden, or None when the cell has none of the knobs on. ``answered``:
    per turn, the step an ambiguous probe's answer resolved it to (#46;
    ``protocol.arms.askback.answered_step``), read from the log when not given."""
    if not askback_on(record.cell.knobs):
        return None
    if not answered:
        episode = generate(record.spec)
        answered = [answered_step(episode, t.as_turn(), t.answer) for t in record.turns]
    questions = recovered = unrecovered = calls = tokens = 0
    escalations = overrides = 0
    seconds = 0.0
    for t, meant in zip(record.turns, answered, strict=True):
        escalations += len(t.escalations)
        overrides += sum(e.confirmed for e in t.escalations)
        if t.askback_calls:
            matcher = [c for c in t.calls if c.role == "matcher"]
            extra = matcher[-t.askback_calls :]
            calls += len(extra)
            needed = [c for c in extra if not c.cached or c.shared]
            tokens += sum(c.prompt_tokens + c.completion_tokens for c in needed)
            seconds += sum(c.wait_s + c.server_s for c in extra if not c.cached)
        if t.question is None:
            continue
        questions += 1
        want = _intended(t, meant)
        if t.first_match != want:
            recovered += t.matched_step == want
            unrecovered += t.matched_step != want
    return Burden(
        questions=questions,
        escalations=escalations,
        overrides=overrides,
        recovered=recovered,
        unrecovered=unrecovered,
        extra_matcher_calls=calls,
        extra_tokens=tokens,
        extra_s=round(seconds, 6),
    )


def per_recovery(burden: Burden) -> str:
    """What each recovery cost the user in asks; pure cost (asks that recovered nothing)
    says so with its count, never a dash (#46)."""
    if burden.recoveries:
        return f"{burden.asked / burden.recoveries:.1f}"
    return f"{burden.asked} asked, 0 recovered"


def burden_text(burden: Burden, episodes: int) -> str:
    """The burden in one phrase: questions and escalations per episode, what they recovered,
    what each recovery cost the user, and the extra matcher requests' tokens."""
    per = max(1, episodes)
    cost = per_recovery(burden) + (" asks each" if burden.recoveries else "")
    return (
        f"asked {burden.questions / per:.2f} q/ep {burden.escalations / per:.2f} esc/ep, "
        f"recovered {burden.recovered} readings {burden.overrides} bookings "
        f"({cost}), +{burden.extra_matcher_calls} matcher calls "
        f"{burden.extra_tokens:,} tok"
    )
