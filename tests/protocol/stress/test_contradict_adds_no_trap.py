"""contradict needs no plain control (issue #46; docs/stress.md, "Controls in the same
slot"): it adds no scored trap. Its two remarks stand in two fillers, carry no step and no
work order, and are labelled ``none`` as the fillers are; an agent that books on them can err
only as it could on the fillers (``unrequested``); every other turn keeps its control's
label. So the contradict cell against the cooperative user is already the same slots asked
plainly (as fillers)."""

from __future__ import annotations

import pytest

from protocol import EpisodeSpec, generate
from protocol.state.machine import judge_turn
from protocol.stress.doses import user_turns
from tests.protocol.stress.test_doses import perfect, play

EPISODES = [
    generate(EpisodeSpec(seed=seed, steps=steps, density=0.3, generator=6, brief="amended"))
    for seed in (100, 101, 102, 103)
    for steps in (10, 15)
]


@pytest.mark.parametrize("dose", (0.1, 0.25, 1.0))
def test_the_remarks_stand_in_fillers_and_score_as_fillers(dose: float) -> None:
    stressed = 0
    for ep in EPISODES:
        turns = user_turns(ep, "contradict", dose)
        stressed += len(turns)
        for i, t in turns.items():
            assert ep.turns[i].kind == "filler"  # the control's turn in the slot
            assert (t.step, t.work_order) == (None, None)  # nothing to book on it
            # booking the cancelled step there errs as on the filler: unrequested
            cancelled = ep.revision.cancel
            assert [e.channel for e in judge_turn(t.step, None, [cancelled])] == ["unrequested"]
        got = play(ep, "contradict", dose, perfect)
        control = play(ep, "cooperative", 0.0, perfect)
        # the labels, turn for turn, are the control's (the remarks' "none" the fillers')
        assert [label for _, label, _ in got] == [label for _, label, _ in control]
    assert stressed > 0
