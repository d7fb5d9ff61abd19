"""The collector while a run or a server is under way (serve.collector, #50): what exists
before is frozen, the first threshold raised, and both restored after, nested in order."""

from __future__ import annotations

import gc

from serve.collector import YOUNG_THRESHOLD, young_collector


def test_the_block_freezes_and_raises_then_restores() -> None:
    before = gc.get_threshold(), gc.get_freeze_count()
    with young_collector():
        assert gc.get_threshold()[0] >= YOUNG_THRESHOLD
        assert gc.get_threshold()[1:] == before[0][1:]
        assert gc.get_freeze_count() > 0
        with young_collector():  # an embedded server inside a run
            assert gc.get_threshold()[0] >= YOUNG_THRESHOLD
        assert gc.get_threshold()[0] >= YOUNG_THRESHOLD  # the inner block undid only itself
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_a_caller_s_own_freeze_and_threshold_are_kept() -> None:
    before = gc.get_threshold()
    gc.set_threshold(2 * YOUNG_THRESHOLD, *before[1:])
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        young: list[list[int]] = [[] for _ in range(10_000)]  # tracked after the caller's freeze
        with young_collector():
            assert gc.get_threshold()[0] == 2 * YOUNG_THRESHOLD  # never lowered
        after = gc.get_freeze_count()
        # CPython drops a frozen object from the permanent generation when it dies, so the
        # count may fall by the few that die meanwhile (other tests' objects on this worker);
        # an unfreeze would make it 0, a second freeze would add the 10,000 young lists
        assert frozen - 1_000 <= after <= frozen, (frozen, after)
        assert len(young) == 10_000
        assert gc.get_threshold()[0] == 2 * YOUNG_THRESHOLD
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
