"""Replica affinity: which replica of an endpoint a call goes to.

A server with a prefix cache (vLLM, SGLang) prefills only the tokens a request does not
share with one it has seen; an episode resends its whole transcript every turn, so its calls
should all reach the replica that holds its prefix. Routing ``affinity`` (the default) sends
an episode's calls (agent and helpers) to one home replica for the whole episode: chosen at
its first call as its group's replica (the arms of one seed share a group, so they share the
brief's prefix): a stable hash of the group for its first episode, the least loaded replica
if that one is saturated; a later arm goes where the group's last went and leaves it only
as a move would (saturated there, an idle replica elsewhere), since the brief is cached
there (#50: first-call spills split a seed's arms, the bench's prefill 1.07 x its minimum;
1.014 after). Later, the episode moves only when its home is saturated (``slots`` requests
in flight) and another replica is idle (at most ``slots - margin``, ``margin`` = slots / 8,
at least 1): the hysteresis keeps an episode from bouncing, and a moved episode stays on its
new home.
Routing ``least-in-flight`` sends every call to the replica with the fewest requests in
flight, whatever its episode (each turn likely misses the cache with several replicas).

An episode's key is ``"<group>#<episode>"`` (:func:`affinity_key`); the scheduler sets it
in :data:`EPISODE` while the episode runs, and :meth:`runner.client.endpoint.Endpoint.chat` reads it
when no ``affinity`` is passed.
"""

from __future__ import annotations

import hashlib
import random
from collections import OrderedDict
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Literal

from protocol.records import CellKey, EpisodeSpec

__all__ = ["EPISODE", "ROUTINGS", "ReplicaChooser", "Routing", "affinity_key", "stable_hash"]

Routing = Literal["affinity", "least-in-flight", "round-robin", "random"]
# round-robin and random: what deployed load balancers do, for comparison (bench/prefix)
ROUTINGS: tuple[Routing, ...] = ("affinity", "least-in-flight", "round-robin", "random")

EPISODE: ContextVar[str | None] = ContextVar("ladder_episode_affinity", default=None)


def affinity_key(cell: CellKey, spec: EpisodeSpec) -> str:
    """``group#episode``: the group is the model and the spec (what the arms of one seed
    share: the brief), the episode adds the arm and its knobs."""
    group = f"{cell.model}|{spec.seed}|{spec.steps}|{spec.density:g}|{spec.domain}|{spec.brief}"
    return f"{group}#{cell.slug()}"


def stable_hash(text: str) -> int:
    """The same number in every process and run (Python's ``hash`` of a str is salted)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


class ReplicaChooser:
    """Picks a replica per call; remembers each episode's home (the most recent
    ``memory`` episodes)."""

    def __init__(
        self, *, routing: Routing = "affinity", slots: int = 1, memory: int = 1 << 16
    ) -> None:
        if routing not in ROUTINGS:
            raise ValueError(f"unknown routing {routing!r}; choose {' or '.join(ROUTINGS)}")
        self.routing = routing
        self.slots = max(1, slots)
        self.margin = max(1, self.slots // 8)
        self.memory = memory
        self._home: OrderedDict[str, int] = OrderedDict()
        self._group: OrderedDict[str, int] = OrderedDict()  # where each group last went
        self.moves = 0  # episodes moved off a saturated home
        self._turn = 0  # round-robin's next replica
        self._rng = random.Random(0)  # random routing, the same in every run

    def pick(self, load: Sequence[int], key: str | None = None) -> int:
        """The replica for a call of episode ``key`` (None: no episode), given each
        replica's requests in flight."""
        n = len(load)
        if self.routing == "round-robin":
            self._turn = (self._turn + 1) % n
            return self._turn
        if self.routing == "random":
            return self._rng.randrange(n)
        least = min(range(n), key=load.__getitem__)
        if n == 1 or key is None or self.routing == "least-in-flight":
            return least
        home = self._home.get(key)
        if home is None or home >= n:
            home = self._first(load, key.rpartition("#")[0] or key, least)
        elif load[home] >= self.slots and load[least] <= self.slots - self.margin:
            home = least
            self.moves += 1
        self._remember(self._home, key, home)
        return home

    def _first(self, load: Sequence[int], group: str, least: int) -> int:
        """An episode's first call: nothing cached for it yet but its group's brief, on the
        group's replica (where its last episode went; a stable hash for its first) unless
        that one is saturated and another less loaded."""
        home = self._group.get(group)
        if home is not None and home < len(load):  # the brief is there: leave as a move would
            if load[home] >= self.slots and load[least] <= self.slots - self.margin:
                home = least
        else:
            home = stable_hash(group) % len(load)
            if load[home] >= self.slots and load[least] < load[home]:
                home = least
        self._remember(self._group, group, home)
        return home

    def _remember(self, memory: OrderedDict[str, int], key: str, home: int) -> None:
        memory[key] = home
        memory.move_to_end(key)
        if len(memory) > self.memory:
            memory.popitem(last=False)
