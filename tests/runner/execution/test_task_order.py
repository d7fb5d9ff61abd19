"""The start order: run order, then longest first over the run's last waves."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from protocol.records import CellKey, EpisodeSpec
from runner.execution.order import TaskOrder
from runner.grid.expand import Task


def _task(arm: str, seed: int) -> Task:
    return Task(
        cell=CellKey(model="m", steps=10, density=0.15, arm=arm),
        spec=EpisodeSpec(seed=seed, steps=10, density=0.15),
    )


def test_run_order_until_the_window_then_longest_cells_first() -> None:
    tasks = [_task(arm, seed) for seed in range(4) for arm in ("raw", "checklist", "enforce")]
    order = TaskOrder(tasks, window=6)
    head = [order.pop() for _ in range(6)]
    assert head == tasks[:6]
    for t, seconds in zip(head, (1.0, 3.0, 2.0, 1.0, 3.0, 2.0), strict=True):
        assert t is not None
        order.observe(t, seconds)
    assert len(order) == 6
    tail = [order.pop() for _ in range(6)]
    assert [t.cell.arm for t in tail if t] == ["checklist"] * 2 + ["enforce"] * 2 + ["raw"] * 2
    assert [t.spec.seed for t in tail if t] == [2, 3, 2, 3, 2, 3]  # ties in run order
    assert order.pop() is None and len(order) == 0


def test_a_cell_not_yet_seen_starts_before_measured_ones() -> None:
    tasks = [_task("raw", 0), _task("raw", 1), _task("checklist", 0)]
    order = TaskOrder(tasks, window=10)
    first = order.pop()
    assert first == tasks[0]
    order.observe(tasks[0], 5.0)
    assert order.pop() == tasks[2]  # unseen: assumed long
    assert order.pop() == tasks[1]
    assert order.pop() is None


@given(
    arms=st.lists(st.sampled_from(("raw", "checklist", "enforce", "directive")), max_size=24),
    seconds=st.lists(st.sampled_from((0.5, 1.0, 2.0)), max_size=24),
)
def test_the_tail_pops_as_a_max_over_every_task_would(
    arms: list[str], seconds: list[float]
) -> None:
    """One estimate per cell (#50) picks what the rule over every task picks: the longest
    estimate (unseen cells first), ties in run order; measured as the tail is popped."""
    tasks = [_task(arm, seed) for seed, arm in enumerate(arms)]
    order = TaskOrder(tasks, window=len(tasks))
    left = list(tasks)
    measured: dict[str, list[float]] = {}

    def estimate(task: Task) -> float:
        got = measured.get(task.cell.arm)
        return sum(got) / len(got) if got else float("inf")

    for i, _ in enumerate(tasks):
        want = max(range(len(left)), key=lambda j: (estimate(left[j]), -j))
        got = order.pop()
        assert got is left.pop(want)
        if i < len(seconds):
            order.observe(got, seconds[i])
            measured.setdefault(got.cell.arm, []).append(seconds[i])
    assert order.pop() is None
