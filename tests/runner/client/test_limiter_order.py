"""The limiter serves the oldest episode first (#40, item 3): under a fixed latency, with
many episodes over a small cap, the first episode finishes within the first tenth of the
run; first come, first served (the old queue) finishes none until the end. Asserted on
counts of requests served (the run's clock under a fixed latency), never on timings."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runner.client.limiter import EPISODE_AGE, Limiter, QueueOrder

EPISODES, TURNS, CAP = 64, 20, 4


async def _run(order: QueueOrder) -> list[int]:
    """EPISODES episodes of TURNS sequential requests each, all started at once, CAP
    requests in flight; the number of requests served when each episode ended, in order."""
    limiter = Limiter(CAP, order=order)
    served = 0
    finished: list[int] = []

    async def episode(age: int) -> None:
        nonlocal served
        EPISODE_AGE.set(age)
        for _ in range(TURNS):
            async with limiter:
                await asyncio.sleep(0.001)  # a fixed latency
                served += 1
        finished.append(served)

    async with asyncio.TaskGroup() as tg:
        for age in range(EPISODES):
            tg.create_task(episode(age))
    assert limiter.in_flight == 0 and limiter.peak == CAP
    return finished


def test_oldest_first_finishes_the_first_episode_within_a_tenth_of_the_run() -> None:
    total = EPISODES * TURNS
    finished = asyncio.run(_run("oldest"))
    assert finished[0] <= total // 10
    # steady: each tenth of the run finishes episodes (no lockstep)
    for tenth in range(2, 11):
        assert any(total * (tenth - 1) // 10 < f <= total * tenth // 10 for f in finished)


def test_first_come_first_served_finishes_in_lockstep() -> None:
    total = EPISODES * TURNS
    finished = asyncio.run(_run("fifo"))
    assert finished[0] > total * 9 // 10  # the old queue: nothing ends before the last tenth


@given(ages=st.lists(st.integers(0, 5), min_size=1, max_size=12))
def test_a_freed_slot_goes_to_the_oldest_waiter_ties_in_arrival_order(ages: list[int]) -> None:
    async def go() -> list[tuple[int, int]]:
        limiter = Limiter(1)
        await limiter.acquire()  # held: every request below queues
        order: list[tuple[int, int]] = []

        async def request(i: int, age: int) -> None:
            EPISODE_AGE.set(age)
            async with limiter:
                order.append((age, i))

        tasks = [asyncio.create_task(request(i, a)) for i, a in enumerate(ages)]
        await asyncio.sleep(0)
        limiter.release()
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(go()) == sorted((a, i) for i, a in enumerate(ages))


@pytest.mark.parametrize("order", ["oldest", "fifo"])
def test_a_cancelled_waiter_leaves_the_queue(order: QueueOrder) -> None:
    async def go() -> None:
        limiter = Limiter(1, order=order)
        await limiter.acquire()
        waiter = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0)
        assert limiter.waiting == 1
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert limiter.waiting == 0
        limiter.release()
        assert limiter.in_flight == 0

    asyncio.run(go())
