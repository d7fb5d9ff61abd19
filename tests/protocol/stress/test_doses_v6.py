"""Generator 6 (issue #46): a dose is a share of one pool of stress slots, the same for every
stress (protocol.stress.doses.dose_count), so a dose means the same count of stressed turns
whatever the stress, capped by its eligible turns; doses nest; generator 5 is unchanged."""

from __future__ import annotations

import itertools

import pytest

from protocol import EpisodeSpec, generate
from protocol.episode.versions import GENERATOR_VERSION
from protocol.records import Episode
from protocol.stress.doses import DOSE_POOL, dose_count, perfect_play, user_turns
from protocol.stress.plan import stress_plan
from protocol.stress.spoof import SPOOF_CLAIMS, SPOOF_VARIANTS

STYLES = ("restate", "contradict", "double")
DOSES = (0.1, 0.25, 0.5, 1.0)
EPISODES = [
    generate(EpisodeSpec(seed=seed, steps=steps, density=0.3, generator=6))
    for seed in (100, 101, 102, 103, 104, 105)
    for steps in (10, 15)
]


def _slots(ep: Episode, stress: str, dose: float) -> list[int]:
    """The planned slots a stress takes (a contradict pair is one: its first turn)."""
    if stress in STYLES:
        plan = stress_plan(ep, user_style=stress, user_dose=dose)  # type: ignore[arg-type]
    else:
        plan = stress_plan(ep, spoof=stress, spoof_dose=dose)
    if stress == "contradict":
        pairs = user_turns(ep, "contradict", dose)
        assert sorted(pairs) == sorted(plan)
        return sorted(i for i, t in pairs.items() if t.kind == "keep_claim")
    return sorted(plan)


def test_generator_6_is_what_new_runs_use() -> None:
    assert GENERATOR_VERSION == 6


def test_a_dose_is_a_count_of_slots_from_one_pool() -> None:
    assert DOSE_POOL == 8
    assert [dose_count(d, 99, 6) for d in DOSES] == [1, 2, 4, 8]
    assert dose_count(0.0, 99, 6) == 0 and dose_count(0.01, 99, 6) == 1
    assert dose_count(1.0, 3, 6) == 3  # capped, never padded
    assert dose_count(0.3125, 99, 6) == 3  # halves round up
    # generator 5: a share of the stress's own eligible turns
    assert [dose_count(d, 4, 5) for d in DOSES] == [1, 1, 2, 4]


@pytest.mark.parametrize("stress", [*STYLES, *SPOOF_VARIANTS])
def test_every_stress_takes_the_same_count_at_a_dose_capped_by_its_turns(stress: str) -> None:
    for ep in EPISODES:
        full = _slots(ep, stress, 1.0)
        for dose in DOSES:
            want = min(len(full), dose_count(dose, 99, 6))
            assert len(_slots(ep, stress, dose)) == want, (ep.spec.seed, dose)


@pytest.mark.parametrize("stress", [*STYLES, *SPOOF_VARIANTS])
def test_doses_nest(stress: str) -> None:
    for ep in EPISODES:
        plans = [set(_slots(ep, stress, d)) for d in DOSES]
        assert all(a <= b for a, b in itertools.pairwise(plans))


def test_forgeries_and_restates_mean_the_same_count_at_one_dose() -> None:
    """Generator 5's complaint: dose 0.25 was one restate but four forgeries at S = 15."""
    for ep in EPISODES:
        receipt = len(_slots(ep, "receipt", 0.25))
        restate = len(_slots(ep, "restate", 0.25))
        if len(_slots(ep, "restate", 1.0)) >= 2:
            assert receipt == restate == 2


def test_the_forged_turns_are_still_the_variants_own() -> None:
    for ep in EPISODES:
        play = perfect_play(ep)
        for variant in SPOOF_VARIANTS:
            for i in _slots(ep, variant, 1.0):
                verdict = play[i].verdict
                assert verdict is not None and verdict.label == SPOOF_CLAIMS[variant][0]


def test_generator_5_keeps_its_share() -> None:
    ep5 = generate(EpisodeSpec(seed=100, steps=15, density=0.3, generator=5))
    ep6 = generate(EpisodeSpec(seed=100, steps=15, density=0.3, generator=6))
    assert ep5.turns == ep6.turns and ep5.steps == ep6.steps  # the episode is version 5's
    n = len(_slots(ep5, "receipt", 1.0))
    assert len(_slots(ep5, "receipt", 0.25)) == max(1, round(0.25 * n))
    assert len(_slots(ep6, "receipt", 0.25)) == 2
