"""The graph sampler and schedule planner of generator version 3 (Section 4.1, Appendix B.1).

Version 3 reads the paper where versions 1 and 2 made choices of their own
(``docs/protocol.md``, "Generator versions"):

- Graph: "a dependency DAG with extra-edge density rho": every phase-forward pair of the S
  sampled templates is an edge with probability rho, nothing forced (Appendix B.1 shows
  seed 100, S = 5 with one edge in the whole graph).
- Revision: the cancelled step is any step (it may have no dependent, B.1); each dependent is
  rewired to its other prerequisites plus the cancelled step's own; one other edge is relaxed
  when the graph offers one, else ``relax`` is null (the revision prompt allows
  ``"relax": null`` and empty rewires).
- Schedule ``earlier`` (the original grid's): every step is asked once, the one later
  cancelled included, before the revision; a perfect agent sees S + 6 matcher-consulting
  turns (Table 7: 16 and 21 at S = 10 and S = 15 dense). Schedule ``regenerated`` (the
  amended replication's): the cancelled step is never asked; S + 5 such turns.
- Traps are picked from what the graph allows: premature asks may target the step later
  cancelled, and fall back to one step asked prematurely twice when only one step can be
  blocked (a one-edge graph); redo probes and the legitimate redo likewise.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from itertools import repeat

from protocol.domains.shape import DomainPool, Template
from protocol.records import Schedule, TurnKind
from protocol.state.machine import sort_ids

__all__ = ["Plan", "Revised", "draw_steps", "plan", "revise", "sample_graph"]

Event = tuple[TurnKind, str | None]  # (kind, step)
Deps = Mapping[str, frozenset[str]]


class Plan:
    def __init__(
        self,
        cancel: str,
        rewires: dict[str, tuple[str, ...]],
        relax: tuple[str, str] | None,
        events: list[Event],
    ) -> None:
        self.cancel = cancel
        self.rewires = rewires
        self.relax = relax
        self.events = events


def draw_steps(
    rng: random.Random, pool: DomainPool, n: int
) -> tuple[list[str], dict[str, Template], dict[str, int]]:
    """S templates and their ids (assigned by a shuffle, so id order says nothing about
    phase), ids sorted, with each step's phase: the first draws of every generator version."""
    templates = rng.sample(list(pool.templates), n)
    ids = [f"s{i + 1}" for i in range(n)]
    rng.shuffle(ids)
    by_id = dict(zip(ids, templates, strict=True))
    ids = list(sort_ids(ids))
    return ids, by_id, {v: by_id[v].phase for v in ids}


def sample_graph(
    rng: random.Random, pool: DomainPool, n: int, rho: float
) -> tuple[list[str], dict[str, Template], dict[str, frozenset[str]]]:
    """S templates, ids by a shuffle, and each phase-forward pair an edge with probability rho."""
    ids, by_id, phase = draw_steps(rng, pool, n)
    edges = {(u, v) for u in ids for v in ids if phase[u] < phase[v] and rng.random() < rho}
    deps = {v: frozenset(u for (u, w) in edges if w == v) for v in ids}
    return ids, by_id, deps


def _topo(rng: random.Random, pending: list[str], deps: Deps, done: set[str]) -> list[str]:
    order: list[str] = []
    while True:
        ready = [v for v in pending if v not in done and deps[v] <= done]
        if not ready:
            return order
        v = rng.choice(ready)
        order.append(v)
        done.add(v)


Revised = tuple[str, dict[str, tuple[str, ...]], tuple[str, str] | None, dict[str, frozenset[str]]]


def revise(rng: random.Random, ids: list[str], deps: Deps) -> Revised:
    """(cancelled step, rewires, relaxed edge or None, the graph after the revision)."""
    c = rng.choice(ids)
    rewires = {d: sort_ids((deps[d] - {c}) | deps[c]) for d in ids if c in deps[d]}
    post = dict(deps)
    post.update({d: frozenset(p) for d, p in rewires.items()})
    relaxable = sorted(
        (w, u) for w in ids if w != c and w not in rewires for u in post[w] if u != c
    )
    relax = rng.choice(relaxable) if relaxable else None
    if relax is not None:
        post[relax[0]] = post[relax[0]] - {relax[1]}
    return c, rewires, relax, post


def _pick(
    rng: random.Random, cands: list[tuple[str, int]], k: int, avoid: set[str]
) -> list[tuple[str, int]]:
    """k (step, gap) positions, distinct steps (not in ``avoid``) while the candidates allow,
    then distinct positions of steps already picked."""
    chosen: list[tuple[str, int]] = []
    pool = [x for x in cands if x[0] not in avoid]
    while len(chosen) < k and pool:
        x = rng.choice(pool)
        chosen.append(x)
        pool = [y for y in pool if y[0] != x[0]]
    if len(chosen) == k:
        return chosen  # the common pick: no second pass (#50, eleventh round)
    rest = [x for x in cands if x not in chosen and x[0] not in avoid]
    while len(chosen) < k and rest:
        x = rng.choice(rest)
        chosen.append(x)
        rest.remove(x)
    return chosen


def _ancestors(v: str, deps: Deps) -> set[str]:
    out: set[str] = set()
    todo = list(deps[v])
    while todo:
        u = todo.pop()
        if u not in out:
            out.add(u)
            todo.extend(deps[u])
    return out


def _topo_within(
    rng: random.Random, pending: list[str], deps: Deps, k: int, needed: set[str]
) -> list[str]:
    """Up to k asks in a random topological order that includes every step of ``needed``
    (closed under prerequisites): a needed step is forced only when the slots left equal the
    needed steps left."""
    order: list[str] = []
    done: set[str] = set()
    while len(order) < k:
        ready = [v for v in pending if v not in done and deps[v] <= done]
        owed = needed - done
        if len(owed) >= k - len(order):
            ready = [v for v in ready if v in owed]
        if not ready:  # the rest waits on the cancelled step (regenerated schedule)
            return order
        v = rng.choice(ready)
        order.append(v)
        done.add(v)
    return order


def _pre_revision(
    rng: random.Random, pending: list[str], deps: Deps, c: str, schedule: Schedule, midway: bool
) -> list[str]:
    """The asks before the revision.

    Version 3 cuts a random topological order of the schedule's steps at a draw from
    [S/3, 2S/3] and, under ``earlier``, moves the cut past the cancelled step's ask, which
    pushes the revision late (issue #27: mean turn 25.7 against 20.1 at S = 10). Version 4
    (``midway``) asks the same number of steps, a draw from [S/3, 2S/3], before the revision
    in both schedules; under ``earlier`` they include the cancelled step and its
    prerequisites (the cut grows only when these alone outnumber it), so the earlier
    schedule keeps S + 6 step turns and both revisions come midway (``docs/protocol.md``).
    """
    n = len(deps)
    if not midway:
        order = _topo(rng, pending, deps, set())
        cut = rng.randint(max(1, n // 3), max(1, 2 * n // 3))
        if schedule == "earlier":
            cut = max(cut, order.index(c) + 1)  # the cancelled step is asked before the revision
        return order[:cut]
    cut = rng.randint(max(1, n // 3), max(1, 2 * n // 3))
    needed = _ancestors(c, deps) | {c} if schedule == "earlier" else set()
    return _topo_within(rng, pending, deps, max(cut, len(needed)), needed)


def plan(
    rng: random.Random,
    ids: list[str],
    deps: Deps,
    revised: Revised,
    schedule: Schedule,
    *,
    midway: bool = False,
) -> Plan | None:
    """The event order, or None when this graph and revision cannot carry the trap budget;
    ``midway`` is version 4's revision placement (:func:`_pre_revision`)."""
    c, rewires, relax, post = revised
    pending = list(ids) if schedule == "earlier" else [v for v in ids if v != c]
    pre = _pre_revision(rng, pending, deps, c, schedule, midway)
    done = set(pre)
    rest = _topo(rng, [v for v in pending if v not in done], post, done)
    if len(pre) + len(rest) != len(pending):
        return None
    base: list[Event] = [("ask", v) for v in pre] + [("revision", None)]
    base += [("ask", v) for v in rest]
    rev = len(pre)
    done_at = {v: i for i, (_, v) in enumerate(base) if v is not None}
    never = len(base) + 1
    slots = _premature_slots(ids, deps, revised, schedule, done_at, rev, len(base))
    premature = _pick(rng, slots, 2, set())
    # every (step, gap) after the step's ask, the cancelled step's up to the revision: a run
    # of gaps per step, counted (#50, eleventh round)
    finished = [
        (r, g)
        for r in ids
        for g in range(done_at.get(r, never) + 1, (rev if r == c else len(base)) + 1)
    ]
    redo = _pick(rng, finished, 2, set())
    legit = _pick(rng, finished, 1, {r for r, _ in redo}) or _pick(rng, finished, 1, set())
    if len(premature) < 2 or len(redo) < 2 or not legit:
        return None
    inserts: list[tuple[int, float, Event]] = []
    chosen: list[tuple[TurnKind, list[tuple[str, int]]]] = [
        ("premature", premature),
        ("redo_probe", redo),
        ("legit_redo", legit),
    ]
    for kind, picked in chosen:
        for v, g in picked:
            inserts.append((g, rng.random(), (kind, v)))
    inserts.append((rng.randint(rev + 1, len(base)), rng.random(), ("superseded_cue", c)))
    return Plan(c, rewires, relax, _weave(base, inserts, {p for p, _ in premature}))


def _premature_slots(
    ids: list[str],
    deps: Deps,
    revised: Revised,
    schedule: Schedule,
    done_at: dict[str, int],
    rev: int,
    n_base: int,
) -> list[tuple[str, int]]:
    """Every (step, gap) where a premature ask may stand: the step live and not yet done at
    the gap, some prerequisite of it (under the graph in force there) not done yet."""
    c, _, _, post = revised
    never = n_base + 1
    # per graph and step, the latest gap at which a prerequisite is not yet done (its ask's
    # index; -1: none): "some prerequisite not done at g" is g <= it. With the step's own ask
    # (its gaps end there) and the revision (the cancelled step's end there; the graph in
    # force changes after it), a step's gaps are two runs, counted, not tested one by one
    # (#50, eleventh round: one max per step and graph, as version 1's traps read them)
    pre, after = (latest_undone(done_at, never, graph) for graph in (deps, post))
    # The cancelled step under the regenerated schedule is never asked: a premature ask of it
    # is allowed only while it stays blocked until the revision (so no re-ask is owed).
    blocked = schedule == "earlier" or any(done_at[u] > rev for u in deps[c])
    slots: list[tuple[str, int]] = []
    for p in ids:
        if p == c and not blocked:
            continue
        last = min(n_base, done_at.get(p, never), rev if p == c else n_base)
        slots += [(p, g) for g in range(min(last, rev, pre[p]) + 1)]  # the graph before
        slots += [(p, g) for g in range(rev + 1, min(last, after[p]) + 1)]  # and after
    return slots


def latest_undone(done_at: Mapping[str, int], never: int, graph: Deps) -> dict[str, int]:
    """Per step of ``graph``, the latest gap at which one of its prerequisites is not yet
    done: the largest of their asks' indices in the base schedule (``never`` for one not
    asked; -1: no prerequisite). "Some prerequisite not done at gap g" is g <= it (#50)."""
    return {v: max(map(done_at.get, us, repeat(never)), default=-1) for v, us in graph.items()}


def _weave(
    base: list[Event], inserts: list[tuple[int, float, Event]], reasked: set[str]
) -> list[Event]:
    """The base order with each insert before the base event at its gap (ties in the order of
    their random keys) and a filler at the end; a prematurely asked step's ask is a re-ask."""
    inserts = sorted(inserts, key=lambda x: (x[0], x[1]))
    events: list[Event] = []
    k = 0
    for i, (kind, step) in enumerate([*base, ("filler", None)]):
        while k < len(inserts) and inserts[k][0] == i:
            events.append(inserts[k][2])
            k += 1
        if i < len(base):
            events.append(("re_ask", step) if kind == "ask" and step in reasked else (kind, step))
    return events
