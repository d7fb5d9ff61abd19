"""restate's control (generator 6, issue #46): ``restate_plain`` asks the same step plainly in
the same slot, on the same work order, so a restate cell against its plain control measures
the follow-up's pressure, not one more scored request; the oracles hold in it."""

from __future__ import annotations

import re

import pytest

from protocol import EpisodeSpec, generate, strings
from protocol.config import Brief, UserStyle
from protocol.records import Episode
from protocol.stress.doses import FORBIDDEN, perfect_play, user_turns
from tests.protocol.stress.test_doses import always_book, perfect, play

DOSES = (0.1, 0.25, 1.0)
BRIEFS: tuple[Brief, ...] = ("amended", "original")
EPISODES = [
    generate(EpisodeSpec(seed=seed, steps=steps, density=0.3, generator=6, brief=brief))
    for seed in (100, 101, 102, 103)
    for steps in (10, 15)
    for brief in BRIEFS
]


def episodes_with(style: UserStyle) -> list[Episode]:
    """The episodes of :data:`EPISODES` that ``style`` stresses at dose 1 (at least half)."""
    eps = [ep for ep in EPISODES if user_turns(ep, style, 1.0)]
    assert len(eps) >= len(EPISODES) // 2
    return eps


def test_the_plain_control_stands_in_the_restates_slots() -> None:
    for ep in episodes_with("restate"):
        for dose in DOSES:
            pressed = user_turns(ep, "restate", dose)
            plain = user_turns(ep, "restate_plain", dose)
            assert sorted(plain) == sorted(pressed)
            for i, t in plain.items():
                p = pressed[i]
                assert (t.kind, t.step, t.work_order) == (p.kind, p.step, p.work_order)
                assert t.step is not None and t.work_order is not None
                text = ep.step(t.step).text
                assert t.text == strings.USER_RESTATE_PLAIN.format(text=text, wo=t.work_order)
                assert p.text == strings.USER_RESTATE_V5.format(text=text, wo=t.work_order)


def test_the_plain_wording_carries_the_same_label() -> None:
    """Judged on the state like any request: the step the brief forbids there."""
    for ep in episodes_with("restate"):
        state = perfect_play(ep)
        for i, t in user_turns(ep, "restate_plain", 1.0).items():
            assert state[i].state.verdict(t.step or "").label in FORBIDDEN
            assert not re.search(r"\b(again|redo|re-do|once more|authori[sz]\w*)\b", t.text.lower())


@pytest.mark.parametrize("dose", DOSES)
def test_the_oracles_hold_in_the_plain_control(dose: float) -> None:
    for ep in episodes_with("restate"):
        control = play(ep, "cooperative", 0.0, perfect)
        got = play(ep, "restate_plain", dose, perfect)
        assert len(got) == len(control) == len(ep.turns)
        assert all(not errors for _, _, errors in got)  # the perfect agent: no error
        pressed = play(ep, "restate", dose, perfect)
        assert [label for _, label, _ in got] == [label for _, label, _ in pressed]
        # always-book behind the state-bound gate: its control's errors, turn for turn
        base = play(ep, "cooperative", 0.0, always_book, gate=True)
        gated = play(ep, "restate_plain", dose, always_book, gate=True)
        assert [e for _, _, e in gated] == [e for _, _, e in base]
