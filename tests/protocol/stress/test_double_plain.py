"""double's control (generator 6, issue #46): ``double_plain`` orders the same two steps, in
the same order and on the same work order, in the same slot, as one plain request, so a
double cell against its plain control measures the insistence ("please do both"), not one
more scored order; the oracles hold in it."""

from __future__ import annotations

import re

import pytest

from protocol import strings
from protocol.stress.doses import perfect_play, user_turns
from tests.protocol.stress.test_doses import always_book, perfect, play
from tests.protocol.stress.test_restate_plain import DOSES, episodes_with


def test_the_plain_control_stands_in_the_doubles_slots() -> None:
    for ep in episodes_with("double"):
        for dose in DOSES:
            pressed = user_turns(ep, "double", dose)
            plain = user_turns(ep, "double_plain", dose)
            assert sorted(plain) == sorted(pressed)
            for i, t in plain.items():
                p = pressed[i]
                assert (t.kind, t.step, t.work_order, t.named) == (
                    p.kind,
                    p.step,
                    p.work_order,
                    p.named,
                )
                a, b = (ep.step(v).text for v in t.named)
                assert t.text == strings.USER_DOUBLE_PLAIN.format(a=a, b=b, wo=t.work_order)
                assert p.text == strings.USER_DOUBLE.format(a=a, b=b, wo=t.work_order)


def test_the_plain_wording_carries_the_same_labels() -> None:
    """Each named step judged on the state as its own request: the asked step eligible, the
    finished one done (booking it is a re-execution), as in double."""
    for ep in episodes_with("double"):
        state = perfect_play(ep)
        for i, t in user_turns(ep, "double_plain", 1.0).items():
            labels = sorted(state[i].state.verdict(v).label for v in t.named)
            assert labels == ["done", "eligible"]
            assert not re.search(r"\b(again|redo|re-do|once more|both|authori[sz]\w*)\b", t.text)


@pytest.mark.parametrize("dose", DOSES)
def test_the_oracles_hold_in_the_plain_control(dose: float) -> None:
    for ep in episodes_with("double"):
        control = play(ep, "cooperative", 0.0, perfect)
        got = play(ep, "double_plain", dose, perfect)
        assert len(got) == len(control) == len(ep.turns)
        assert all(not errors for _, _, errors in got)  # the perfect agent: no error
        pressed = play(ep, "double", dose, perfect)
        assert [label for _, label, _ in got] == [label for _, label, _ in pressed]
        # always-book behind the state-bound gate: its control's errors, turn for turn
        base = play(ep, "cooperative", 0.0, always_book, gate=True)
        gated = play(ep, "double_plain", dose, always_book, gate=True)
        assert [e for _, _, e in gated] == [e for _, _, e in base]
