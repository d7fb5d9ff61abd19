"""The limiter's tail rule (#50): once every episode has started, an episode with no slack
(its turns left x the limit >= the run's turns left) goes before older ones, so the run's
last episodes do not finish on a fraction of the slots. On a virtual clock
(:mod:`bench._virtual`): the makespan is the schedule's, counted in service times."""

from __future__ import annotations

import asyncio

from bench._virtual import run_virtual
from runner.client.limiter import EPISODE_AGE, EPISODE_LEFT, Limiter, TurnsLeft

EPISODES, TURNS, CAP = 24, 20, 16  # 1.5 x the cap, as the baselines bench's C = 64 run
BOUND = EPISODES * TURNS / CAP  # every slot busy to the end: 30 service times


async def _run(tail: bool) -> tuple[float, list[float]]:
    """EPISODES episodes of TURNS requests of one service time each, all started at once,
    CAP in flight: the makespan and each episode's end, in order of their ends."""
    loop = asyncio.get_running_loop()
    limiter = Limiter(CAP)
    lefts = [TurnsLeft(TURNS) for _ in range(EPISODES)]
    if tail:
        limiter.tail = lambda: sum(left.n for left in lefts)
    finished: list[float] = []

    async def episode(age: int) -> None:
        EPISODE_AGE.set(age)
        EPISODE_LEFT.set(lefts[age])
        for _ in range(TURNS):
            async with limiter:
                await asyncio.sleep(1.0)
            lefts[age].n -= 1
        finished.append(loop.time())

    async with asyncio.TaskGroup() as tg:
        for age in range(EPISODES):
            tg.create_task(episode(age))
    assert limiter.in_flight == 0 and limiter.waiting == 0
    return loop.time(), finished


def test_oldest_first_alone_ends_on_half_the_slots() -> None:
    makespan, finished = run_virtual(_run(tail=False))
    assert makespan >= 2 * TURNS - 1  # the youngest 8 run alone after the oldest 16
    assert finished[0] <= TURNS + 1


def test_the_tail_rule_keeps_every_slot_busy_to_the_end() -> None:
    makespan, finished = run_virtual(_run(tail=True))
    assert makespan <= 1.1 * BOUND  # 33 here (lag: a releasing episode re-queues late)
    assert finished[0] < makespan  # not all in lockstep to the last round


async def _request(limiter: Limiter, order: list[int], age: int, left: int) -> None:
    """One request of the episode of that age with that many turns left: its age noted
    when it holds a slot."""
    EPISODE_AGE.set(age)
    EPISODE_LEFT.set(TurnsLeft(left))
    async with limiter:
        order.append(age)


def test_the_tail_rule_serves_an_episode_with_no_slack_first() -> None:
    """With slack everywhere the oldest waiter goes first; an episode whose turns left fill
    every round to the run's end goes before it."""

    async def go(left_of_young: int) -> list[int]:
        limiter = Limiter(1)
        limiter.tail = lambda: 10  # the run's turns left: 10 rounds of one slot
        await limiter.acquire()
        order: list[int] = []

        old, young = _request(limiter, order, 0, 2), _request(limiter, order, 1, left_of_young)
        tasks = [asyncio.create_task(old), asyncio.create_task(young)]
        await asyncio.sleep(0)
        limiter.release()
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(go(9)) == [0, 1]  # 9 x 1 < 10: slack, the oldest first
    assert asyncio.run(go(10)) == [1, 0]  # 10 x 1 >= 10: no slack, it goes first


def test_a_cancelled_waiter_leaves_the_tail_and_the_slot_goes_on() -> None:
    """A waiter cancelled in the tail (its entries stay in both queues, skipped when popped)
    is no longer counted, and the freed slot goes to the next live waiter."""

    async def go() -> list[int]:
        limiter = Limiter(1)
        limiter.tail = lambda: 1  # every waiter has no slack: the longest first
        await limiter.acquire()
        order: list[int] = []

        longest = asyncio.create_task(_request(limiter, order, 0, 9))
        other = asyncio.create_task(_request(limiter, order, 1, 3))
        await asyncio.sleep(0)
        assert limiter.waiting == 2
        longest.cancel()
        await asyncio.gather(longest, return_exceptions=True)
        assert limiter.waiting == 1
        limiter.release()
        await other
        assert limiter.in_flight == 0 and limiter.waiting == 0
        return order

    assert asyncio.run(go()) == [1]


def test_the_queues_hold_a_few_times_the_live_waiters() -> None:
    """Each queue keeps the other's grants until they surface; they are dropped before the
    queues grow past a few times the live waiters (a run of 2,000 episodes in its tail)."""
    limiter = Limiter(4)
    lefts = [TurnsLeft(30) for _ in range(64)]
    limiter.tail = lambda: sum(left.n for left in lefts)
    longest = 0

    async def episode(age: int) -> None:
        nonlocal longest
        EPISODE_AGE.set(age)
        EPISODE_LEFT.set(lefts[age])
        for _ in range(30):
            async with limiter:
                await asyncio.sleep(1.0)
                queued = len(limiter._waiters) + len(limiter._longest)
                longest = max(longest, queued)
            lefts[age].n -= 1

    async def go() -> None:
        async with asyncio.TaskGroup() as tg:
            for age in range(64):
                tg.create_task(episode(age))

    run_virtual(go())
    assert longest <= 4 * 64 + 2 * 4 + 2  # never more than the bound (+ one push each)
