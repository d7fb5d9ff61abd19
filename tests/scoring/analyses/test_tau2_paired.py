"""Paired scoring of the τ²-bench rungs: pass^k, wrongful writes, the paired bootstrap."""

from __future__ import annotations

from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.analyses.tau2_paired import (
    EpisodeOutcome,
    GoldAction,
    WriteCall,
    paired_bootstrap,
    pass_hat_k,
    successes_by_task,
    summarize,
    wrongful_writes,
)


def test_pass_hat_k_is_the_mean_of_per_task_combinations() -> None:
    trials = {"a": [True, True, False, True], "b": [False] * 4, "c": [True] * 4}
    assert pass_hat_k(trials, 1) == pytest.approx((3 / 4 + 0 + 1) / 3)
    assert pass_hat_k(trials, 2) == pytest.approx((comb(3, 2) / comb(4, 2) + 0 + 1) / 3)
    assert pass_hat_k(trials, 4) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="fewer than k=5"):
        pass_hat_k(trials, 5)


def test_wrongful_writes_compare_only_the_gold_compare_args() -> None:
    gold = [
        GoldAction(
            name="cancel_reservation", arguments={"reservation_id": "R1"}, compare_args=None
        ),
        GoldAction(
            name="update_reservation_baggages",
            arguments={"reservation_id": "R2", "total_baggages": 2, "payment_id": "p"},
            compare_args=("reservation_id", "total_baggages"),
        ),
    ]
    calls = [
        WriteCall(name="cancel_reservation", arguments={"reservation_id": "R1"}),
        WriteCall(
            name="update_reservation_baggages",
            arguments={"reservation_id": "R2", "total_baggages": 2, "payment_id": "q"},
        ),
        WriteCall(name="cancel_reservation", arguments={"reservation_id": "R9"}),
        WriteCall(name="send_certificate", arguments={"user_id": "u", "amount": 50}),
    ]
    assert wrongful_writes(calls, gold) == 2
    assert wrongful_writes(calls[:2], gold) == 0


def test_paired_bootstrap_extremes_and_pairing() -> None:
    a = {"t1": [False], "t2": [False], "t3": [True]}
    b = {"t1": [True], "t2": [True], "t3": [True], "t4": [True]}
    diff = paired_bootstrap(a, b, n_boot=2000)
    assert diff.n_tasks == 3  # t4 is unpaired and left out
    assert diff.diff == pytest.approx(2 / 3)
    assert 0.0 <= diff.low <= diff.diff <= diff.high <= 1.0
    same = paired_bootstrap(a, a, n_boot=500)
    assert (same.diff, same.low, same.high) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="share no task"):
        paired_bootstrap({"x": [True]}, {"y": [True]})


_TRIALS = st.dictionaries(
    st.sampled_from([f"t{i}" for i in range(12)]),
    st.tuples(
        st.lists(st.booleans(), min_size=2, max_size=2),
        st.lists(st.booleans(), min_size=2, max_size=2),
    ),
    min_size=1,
)


@settings(max_examples=60, deadline=None)
@given(_TRIALS, st.integers(0, 2**16))
def test_paired_bootstrap_is_deterministic_antisymmetric_and_bounded(
    pairs: dict[str, tuple[list[bool], list[bool]]], seed: int
) -> None:
    a = {t: x for t, (x, _) in pairs.items()}
    b = {t: y for t, (_, y) in pairs.items()}
    d = paired_bootstrap(a, b, n_boot=400, seed=seed)
    assert d == paired_bootstrap(a, b, n_boot=400, seed=seed)
    r = paired_bootstrap(b, a, n_boot=400, seed=seed)
    assert r.diff == pytest.approx(-d.diff)
    assert r.low == pytest.approx(-d.high) and r.high == pytest.approx(-d.low)
    assert -1.0 <= d.low <= d.high <= 1.0
    assert d.diff == pytest.approx(pass_hat_k(b, 1) - pass_hat_k(a, 1))


def test_summarize_counts_episodes_not_writes_for_wrongful_write_episodes() -> None:
    outcomes = [
        EpisodeOutcome(task_id="t1", trial=0, reward=1.0),
        EpisodeOutcome(task_id="t1", trial=1, reward=0.0, wrongful_writes=3, vetoes=1),
        EpisodeOutcome(task_id="t2", trial=1, reward=1.0, violating_writes_executed=2),
        EpisodeOutcome(
            task_id="t2", trial=0, reward=0.0, wrongful_writes=1, notices=2, overrides=1
        ),
    ]
    line = summarize("enforce", outcomes, ks=(1, 2, 3))
    assert (line.n_tasks, line.n_episodes) == (2, 4)
    assert line.pass_1 == pytest.approx(0.5)
    assert line.pass_k == {1: pytest.approx(0.5), 2: 0.0}  # k=3 > two trials: left out
    assert line.wrongful_write_episodes == 2
    assert (line.violating_writes_executed, line.vetoes, line.notices, line.overrides) == (
        2,
        1,
        2,
        1,
    )
    assert successes_by_task(outcomes)["t2"] == [False, True]  # trial order
