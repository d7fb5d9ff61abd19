"""Generator versions 1 and 2 (same episodes), kept for their logs (Section 4.1).

Versions 1 and 2 made these choices:

- Randomness comes from :class:`random.Random` seeded with strings built from the spec (string
  seeds hash with SHA-512, independent of ``PYTHONHASHSEED``). The graph and schedule stream
  depends on (seed, S, rho, domain) only, so the two briefs and the paraphrase tiers run on
  the same graph and schedule; wording and ambiguous probes use their own streams.
- Graph: S templates sampled from the domain's 18; ids s1..sS assigned by a shuffle, so id
  order carries no phase information. Edges only run from a lower to a higher phase
  (phase-consistent, hence acyclic): four *base* edges (one prerequisite each for four
  randomly chosen later-phase steps) that make the trap budget feasible, plus every other
  phase-forward pair with probability rho (the *extra-edge density*).
- Revision: the cancelled step has at least one dependent and is never asked before the
  revision; each dependent is rewired to its other prerequisites plus the cancelled step's own
  prerequisites (so order is kept); one other edge is relaxed.
- Schedule: 44 turns for every S. Every non-cancelled step is asked once when eligible under
  the perfect-behaviour plan; traps are inserted at uniformly random valid positions: two
  premature asks (the step's later ask becomes its planned ``re_ask``), two redo probes, one
  superseded cue after the revision, one legitimate redo. Fillers fill the rest; with an
  ambiguous-probe rate, each filler becomes, with that probability, a probe naming two steps
  eligible at that point.
- Every request carries a fresh work order ``#Wdddd``, unique in the episode; fillers and the
  revision carry none. Completion codes ``RC-dddd`` are unique in the episode.
- S must be 5..18: below 5 the trap budget cannot be met (the paper's smallest graph is 5).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from protocol.domains.shape import DomainPool, Template
from protocol.episode import sampler
from protocol.episode.parts import assemble, steps_and_revision, stream_seed
from protocol.episode.versions import MAX_ATTEMPTS, N_TURNS, Paraphrases, SpecError, pool_of
from protocol.episode.wording import wording_v1
from protocol.records import Episode, EpisodeSpec, Turn, TurnKind
from protocol.state.machine import sort_ids

__all__ = ["generate_v1"]

BASE_EDGES = 4


def _sample_graph(
    rng: random.Random, pool: DomainPool, n: int, rho: float
) -> tuple[list[str], dict[str, Template], dict[str, frozenset[str]]]:
    ids, by_id, phase = sampler.draw_steps(rng, pool, n)
    edges: set[tuple[str, str]] = set()
    later = [v for v in ids if any(phase[u] < phase[v] for u in ids)]
    for v in rng.sample(later, min(BASE_EDGES, len(later))):
        edges.add((rng.choice([u for u in ids if phase[u] < phase[v]]), v))
    for u in ids:
        for v in ids:
            if phase[u] < phase[v] and rng.random() < rho:
                edges.add((u, v))
    deps = {v: frozenset(u for (u, w) in edges if w == v) for v in ids}
    return ids, by_id, deps


_Event = tuple[TurnKind, str | None]  # (kind, step)


class _Plan:
    def __init__(
        self,
        cancel: str,
        rewires: dict[str, tuple[str, ...]],
        relax: tuple[str, str],
        events: list[_Event],
    ) -> None:
        self.cancel = cancel
        self.rewires = rewires
        self.relax = relax
        self.events = events


def _topo_asks(
    rng: random.Random,
    pending: list[str],
    deps: Mapping[str, frozenset[str]],
    done: set[str],
    limit: int,
) -> list[str]:
    order: list[str] = []
    while len(order) < limit:
        ready = [v for v in pending if v not in done and deps[v] <= done]
        if not ready:
            break
        v = rng.choice(ready)
        order.append(v)
        done.add(v)
    return order


def _plan(rng: random.Random, ids: list[str], deps: dict[str, frozenset[str]]) -> _Plan | None:
    revision = _revision(rng, ids, deps)
    if revision is None:
        return None
    c, rewires, post, relax = revision
    pending = [v for v in ids if v != c]
    n = len(pending)
    done: set[str] = set()
    pre = _topo_asks(rng, pending, deps, done, rng.randint(max(1, n // 3), max(1, 2 * n // 3)))
    rest = _topo_asks(rng, pending, post, done, n)
    if len(pre) + len(rest) != n:
        return None
    base: list[_Event] = [("ask", v) for v in pre] + [("revision", None)]
    base += [("ask", v) for v in rest]
    traps = _traps(rng, pending, base, len(pre), deps, post)
    if traps is None:
        return None
    return _Plan(c, rewires, relax, _interleave(rng, base, len(pre), c, traps))


def _revision(
    rng: random.Random, ids: list[str], deps: dict[str, frozenset[str]]
) -> tuple[str, dict[str, tuple[str, ...]], dict[str, frozenset[str]], tuple[str, str]] | None:
    """The cancelled step, its dependents' rewired prerequisites, the graph after the
    revision and the relaxed edge (None: no step can be cancelled or no edge relaxed)."""
    cancels = [c for c in ids if any(c in deps[v] for v in ids)]
    if not cancels:
        return None
    c = rng.choice(cancels)
    rewires = {d: sort_ids((deps[d] - {c}) | deps[c]) for d in ids if c in deps[d]}
    post = dict(deps)
    post.update({d: frozenset(p) for d, p in rewires.items()})
    relaxable = sorted(
        (w, u) for w in ids if w != c and w not in rewires for u in post[w] if u != c
    )
    if not relaxable:
        return None
    relax = rng.choice(relaxable)
    post[relax[0]] = post[relax[0]] - {relax[1]}
    return c, rewires, post, relax


_Traps = tuple[list[tuple[str, int]], list[tuple[str, int]], list[tuple[str, int]]]


def _pick(
    rng: random.Random, cands: list[tuple[str, int]], k: int, used: set[str]
) -> list[tuple[str, int]]:
    """Up to k (step, gap) positions of distinct steps not in ``used``, drawn in turn
    (version 1's picks; versions 3 on: :func:`protocol.episode.sampler._pick`)."""
    chosen: list[tuple[str, int]] = []
    cands = [x for x in cands if x[0] not in used]
    while len(chosen) < k and cands:
        v, g = rng.choice(cands)
        chosen.append((v, g))
        cands = [x for x in cands if x[0] != v]
    return chosen


def _traps(
    rng: random.Random,
    pending: list[str],
    base: list[_Event],
    rev: int,
    deps: Mapping[str, frozenset[str]],
    post: Mapping[str, frozenset[str]],
) -> _Traps | None:
    """Two premature asks, two redo probes and one legitimate redo, each a (step, gap of
    ``base``) at a valid position (None: the budget cannot be met)."""
    done_at = {v: i for i, (_, v) in enumerate(base) if v is not None}
    never = len(base) + 1

    # a step is premature at a gap before its ask while some prerequisite of the graph at
    # that gap is not done there: the latest of their asks is at the gap or after (#50: one
    # max per step and graph, not a scan of its prerequisites per gap); a step's gaps, up to
    # its ask, are two runs split at the revision, counted (#50, eleventh round)
    before, after = (sampler.latest_undone(done_at, never, g) for g in (deps, post))
    premature = _pick(
        rng,
        [
            (p, g)
            for p in pending
            for run in (
                range(min(done_at[p], rev, before[p]) + 1),
                range(rev + 1, min(done_at[p], after[p], len(base)) + 1),
            )
            for g in run
        ],
        2,
        set(),
    )
    # every (done step, later gap), listed once for the three picks (pick copies it; #50)
    done_gaps = [(r, g) for r in pending for g in range(done_at.get(r, never) + 1, len(base) + 1)]
    redo = _pick(rng, done_gaps, 2, set())
    legit = _pick(rng, done_gaps, 1, {r for r, _ in redo}) or _pick(rng, done_gaps, 1, set())
    if len(premature) < 2 or len(redo) < 2 or len(legit) < 1:
        return None
    return premature, redo, legit


def _interleave(
    rng: random.Random, base: list[_Event], rev: int, c: str, traps: _Traps
) -> list[_Event]:
    """``base`` with the traps and the superseded cue inserted at their gaps (ties in a
    random order); a prematurely asked step's later ask becomes its ``re_ask``."""
    premature, redo, legit = traps
    inserts: list[tuple[int, float, _Event]] = []
    for kind, chosen in (("premature", premature), ("redo_probe", redo), ("legit_redo", legit)):
        for v, g in chosen:
            inserts.append((g, rng.random(), (kind, v)))  # type: ignore[arg-type]
    inserts.append((rng.randint(rev + 1, len(base)), rng.random(), ("superseded_cue", c)))
    reasked = {p for p, _ in premature}
    events: list[_Event] = []
    inserts.sort(key=lambda x: (x[0], x[1]))
    k = 0
    tail: list[_Event] = [*base, ("filler", None)]
    for i, (kind, step) in enumerate(tail):
        while k < len(inserts) and inserts[k][0] == i:
            events.append(inserts[k][2])
            k += 1
        if i < len(base):
            events.append(("re_ask", step) if kind == "ask" and step in reasked else (kind, step))
    return events


def generate_v1(spec: EpisodeSpec, paraphrases: Paraphrases | None) -> Episode:
    """Versions 1 and 2 (same episodes)."""
    pool = pool_of(spec)
    rng = random.Random(stream_seed(spec, "graph"))
    for _ in range(MAX_ATTEMPTS):
        ids, by_id, deps = _sample_graph(rng, pool, spec.steps, spec.density)
        plan = _plan(rng, ids, deps)
        if plan is not None and sum(k != "filler" for k, _ in plan.events) <= N_TURNS:
            break
    else:  # pragma: no cover - every supported spec plans within a few attempts (tested)
        raise SpecError(f"could not plan an episode for {spec}")

    steps, revision = steps_and_revision(
        rng, ids, by_id, deps, plan.cancel, plan.rewires, plan.relax
    )
    texts = {s.id: s.text for s in steps}

    # Fillers fill the 44 turns; events keep their order.
    events: list[_Event] = list(plan.events)
    slots = set(rng.sample(range(N_TURNS), len(events)))
    it = iter(events)
    schedule: list[_Event] = [next(it) if i in slots else ("filler", None) for i in range(N_TURNS)]
    schedule = _add_ambiguous(spec, schedule, deps, plan)
    work_orders = iter(rng.sample(range(1000, 10000), N_TURNS))

    words = random.Random(stream_seed(spec, "words"))
    turns: list[Turn] = []
    for i, (kind, v) in enumerate(schedule):
        idx = words.randrange(3)
        if kind == "filler":
            turns.append(
                Turn(
                    index=i,
                    kind=kind,
                    step=None,
                    work_order=None,
                    text=pool.fillers[words.randrange(len(pool.fillers))],
                )
            )
            continue
        if kind == "revision":
            turns.append(Turn(index=i, kind=kind, step=None, work_order=None, text=revision.text))
            continue
        wo = f"#W{next(work_orders)}"
        if kind == "ambiguous":
            assert v is not None
            a, b = v.split("|")
            text = pool.ambiguous[idx].format(a=texts[a], b=texts[b], wo=wo)
            turns.append(
                Turn(index=i, kind=kind, step=None, work_order=wo, text=text, named=(a, b))
            )
            continue
        assert v is not None
        if kind == "re_ask":
            text = pool.re_asks[idx].format(text=texts[v], wo=wo)
        else:
            text = wording_v1(by_id[v], kind, idx, spec.paraphrase_tier, paraphrases).format(wo=wo)
        turns.append(Turn(index=i, kind=kind, step=v, work_order=wo, text=text))

    return assemble(spec, steps, revision, turns)


def _add_ambiguous(
    spec: EpisodeSpec,
    schedule: list[_Event],
    deps: Mapping[str, frozenset[str]],
    plan: _Plan,
) -> list[_Event]:
    """Turn fillers into ambiguous probes at ``spec.ambiguous_rate`` (own RNG stream)."""
    if spec.ambiguous_rate <= 0:
        return schedule
    rng = random.Random(stream_seed(spec, f"ambiguous|{spec.ambiguous_rate!r}"))
    graph: dict[str, frozenset[str]] = dict(deps)
    done: set[str] = set()
    out: list[_Event] = []
    for kind, v in schedule:
        if kind == "revision":
            graph.update({d: frozenset(p) for d, p in plan.rewires.items()})
            graph[plan.relax[0]] = graph[plan.relax[0]] - {plan.relax[1]}
        if kind == "filler" and rng.random() < spec.ambiguous_rate:
            ready = sort_ids(
                u for u in graph if u != plan.cancel and u not in done and graph[u] <= done
            )
            if len(ready) >= 2:
                a, b = rng.sample(list(ready), 2)
                out.append(("ambiguous", f"{a}|{b}"))
                continue
        if kind in ("ask", "re_ask") and v is not None:
            done.add(v)
        out.append((kind, v))
    return out
