"""The deterministic episode generator (Section 4.1): ``generate(spec) -> Episode``.

An episode is a pure function of its :class:`EpisodeSpec`, ``spec.generator`` included: every
version stays selectable so a log rescores against the episodes it was run on
(:data:`GENERATOR_VERSION` is what new runs use; ``docs/protocol.md``, "Generator versions"):

- 1: the first generator (described below).
- 2: version 1's episodes; the scripted user drops a deferred step once a planned ask of it
  is served (no double re-ask; :mod:`protocol.user`).
- 3: the paper's graph sampler, revision and two schedule versions
  (:mod:`protocol.sampler`); premature asks use the ask wordings; tier 2 reads the held-out
  cache for asks, premature asks, re-asks and redo probes; ambiguous-probe candidates are
  fillers the scripted user turns into probes on the realized state.

Versions 1 and 2 made these choices, kept for their logs:

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
from collections.abc import Mapping, Sequence

from protocol import sampler
from protocol.brief import render_brief, render_revision
from protocol.domain_types import DomainPool, Template
from protocol.domains import POOLS
from protocol.records import Episode, EpisodeSpec, Revision, Step, Turn, TurnKind
from protocol.state import sort_ids

__all__ = [
    "GENERATOR_VERSION",
    "GENERATOR_VERSIONS",
    "MAX_STEPS",
    "MIN_STEPS",
    "N_TURNS",
    "TRAP_BUDGET",
    "Paraphrases",
    "SpecError",
    "check_spec",
    "generate",
]

GENERATOR_VERSION = 3  # what new runs use
GENERATOR_VERSIONS = (1, 2, 3)  # every version a log can name
N_TURNS = 44
MIN_STEPS = 5
MAX_STEPS = 18
TRAP_BUDGET: dict[TurnKind, int] = {
    "premature": 2,
    "redo_probe": 2,
    "superseded_cue": 1,
    "legit_redo": 1,
}
BASE_EDGES = 4
MAX_ATTEMPTS = 500

# Held-out paraphrases (tier 2): template slug -> kind -> rewrites, each with one "{wo}".
# Versions 1-2: kind "asks" | "premature" | "redo_probes" -> a flat list of rewrites.
# Version 3 (Appendix A.5, 108 templates x 3 rewrites): kind "asks" | "redo_probes" -> one list
# of three rewrites per template paraphrase (protocol.paraphrases checks it).
Paraphrases = Mapping[str, Mapping[str, Sequence[str | Sequence[str]]]]


class SpecError(ValueError):
    """A spec the generator cannot honour; the message is one line for the user."""


def check_spec(spec: EpisodeSpec, paraphrases: Paraphrases | None = None) -> None:
    if spec.generator not in GENERATOR_VERSIONS:
        raise SpecError(
            f"unknown generator version {spec.generator} (this release knows "
            f"{', '.join(map(str, GENERATOR_VERSIONS))}); rescore with the release that wrote it"
        )
    if spec.schedule is not None and spec.schedule not in ("earlier", "regenerated"):
        raise SpecError(f"unknown schedule {spec.schedule!r}; choose earlier or regenerated")
    if spec.schedule is not None and spec.generator < 3:
        raise SpecError("schedule versions need generator version 3 or later")
    if not MIN_STEPS <= spec.steps <= MAX_STEPS:
        raise SpecError(
            f"steps must be between {MIN_STEPS} and {MAX_STEPS} (got {spec.steps}); "
            f"the trap budget needs at least {MIN_STEPS} steps and each domain has {MAX_STEPS}"
        )
    if not 0.0 <= spec.density <= 1.0:
        raise SpecError(f"density must be in [0, 1] (got {spec.density})")
    if spec.domain not in POOLS:
        raise SpecError(f"unknown domain {spec.domain!r}; choose one of: {', '.join(POOLS)}")
    if spec.brief not in ("amended", "original"):
        raise SpecError(f"unknown brief {spec.brief!r}; choose amended or original")
    if spec.paraphrase_tier not in (0, 1, 2):
        raise SpecError(f"paraphrase tier must be 0, 1 or 2 (got {spec.paraphrase_tier})")
    if spec.paraphrase_tier == 2 and paraphrases is None:
        raise SpecError("paraphrase tier 2 needs a held-out paraphrase cache file")
    if not 0.0 <= spec.ambiguous_rate <= 1.0:
        raise SpecError(f"ambiguous rate must be in [0, 1] (got {spec.ambiguous_rate})")


# --- graph ---------------------------------------------------------------------------


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


# --- plan ----------------------------------------------------------------------------

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

    pending = [v for v in ids if v != c]
    n = len(pending)
    done: set[str] = set()
    pre = _topo_asks(rng, pending, deps, done, rng.randint(max(1, n // 3), max(1, 2 * n // 3)))
    rest = _topo_asks(rng, pending, post, done, n)
    if len(pre) + len(rest) != n:
        return None
    base: list[_Event] = [("ask", v) for v in pre] + [("revision", None)]
    base += [("ask", v) for v in rest]
    rev = len(pre)
    done_at = {v: i for i, (_, v) in enumerate(base) if v is not None}
    never = len(base) + 1

    def is_done(v: str, gap: int) -> bool:
        return done_at.get(v, never) < gap

    def graph(gap: int) -> Mapping[str, frozenset[str]]:
        return deps if gap <= rev else post

    gaps = range(len(base) + 1)
    inserts: list[tuple[int, float, _Event]] = []

    def pick(cands: list[tuple[str, int]], k: int, used: set[str]) -> list[tuple[str, int]]:
        chosen: list[tuple[str, int]] = []
        cands = [x for x in cands if x[0] not in used]
        while len(chosen) < k and cands:
            v, g = rng.choice(cands)
            chosen.append((v, g))
            cands = [x for x in cands if x[0] != v]
        return chosen

    premature = pick(
        [
            (p, g)
            for p in pending
            for g in gaps
            if g <= done_at[p] and any(not is_done(u, g) for u in graph(g)[p])
        ],
        2,
        set(),
    )
    redo = pick([(r, g) for r in pending for g in gaps if is_done(r, g)], 2, set())
    legit = pick(
        [(r, g) for r in pending for g in gaps if is_done(r, g)], 1, {r for r, _ in redo}
    ) or pick([(r, g) for r in pending for g in gaps if is_done(r, g)], 1, set())
    if len(premature) < 2 or len(redo) < 2 or len(legit) < 1:
        return None
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
    return _Plan(c, rewires, relax, events)


# --- wording -------------------------------------------------------------------------

_WORDINGS: dict[TurnKind, str] = {
    "ask": "asks",
    "premature": "premature",
    "redo_probe": "redo_probes",
    "superseded_cue": "status",
    "legit_redo": "legit_redo",
}


def _wording(
    t: Template, kind: TurnKind, idx: int, tier: int, paraphrases: Paraphrases | None
) -> str:
    field = _WORDINGS[kind]
    return _pick_wording(t, field, idx, tier, paraphrases)


def _pick_wording(
    t: Template, field: str, idx: int, tier: int, paraphrases: Paraphrases | None
) -> str:
    if tier == 2 and paraphrases is not None and field in ("asks", "premature", "redo_probes"):
        held_out = paraphrases.get(t.slug, {}).get(field)
        if held_out:
            return str(held_out[idx % len(held_out)])
    options: Sequence[str] = getattr(t, field)
    return options[(idx + (1 if tier == 1 else 0)) % len(options)]


# Version 3: premature asks and re-asks are asks (Appendix A.5 counts 108 templates: 54 asks and
# 54 redo probes, A.3), so they share the ask wordings; the status and legitimate-redo
# wordings are not rewritten at tier 2 (A.5: "every ask, premature probe, and redo probe").
_WORDINGS_V3: dict[TurnKind, str] = {**_WORDINGS, "premature": "asks", "re_ask": "asks"}


def _wording_v3(
    t: Template,
    kind: TurnKind,
    idx: int,
    rewrite: int,
    tier: int,
    paraphrases: Paraphrases | None,
) -> str | None:
    """The turn's wording; None for a tier-0/1 re-ask (it keeps the re-ask frames)."""
    field = _WORDINGS_V3[kind]
    if tier == 2 and paraphrases is not None and field in ("asks", "redo_probes"):
        try:
            group = paraphrases[t.slug][field][idx]
            if isinstance(group, str):  # a version-1 (flat) cache
                raise TypeError(group)
            return str(group[rewrite])
        except (KeyError, IndexError, TypeError):
            raise SpecError(
                f"the paraphrase cache has no {field} rewrite {idx}.{rewrite} for {t.slug}; "
                "check it with protocol.paraphrases.check_paraphrases"
            ) from None
    if kind == "re_ask":
        return None
    return _pick_wording(t, field, idx, tier, None)


def _seed(spec: EpisodeSpec, stream: str) -> str:
    return f"{stream}|{spec.seed}|{spec.steps}|{spec.density!r}|{spec.domain}"


def _steps_and_revision(
    rng: random.Random,
    ids: Sequence[str],
    by_id: Mapping[str, Template],
    deps: Mapping[str, frozenset[str]],
    plan: _Plan | sampler.Plan,
) -> tuple[tuple[Step, ...], Revision]:
    """The steps (codes drawn from ``rng``, in id order) and the revision message, as every
    generator version builds them."""
    codes = rng.sample(range(1000, 10000), len(ids))
    steps = tuple(
        Step(
            id=v, slug=by_id[v].slug, text=by_id[v].text, code=f"RC-{code}", deps=sort_ids(deps[v])
        )
        for v, code in zip(ids, codes, strict=True)
    )
    texts = {s.id: s.text for s in steps}
    revision = Revision(
        cancel=plan.cancel,
        rewires=plan.rewires,
        relax=plan.relax,
        text=render_revision(texts, plan.cancel, plan.rewires, plan.relax),
    )
    return steps, revision


def generate(spec: EpisodeSpec, paraphrases: Paraphrases | None = None) -> Episode:
    """The episode of ``spec``; same spec (and cache), byte-identical episode."""
    check_spec(spec, paraphrases)
    if spec.generator >= 3:
        return _generate_v3(spec, paraphrases)
    return _generate_v1(spec, paraphrases)


def _generate_v1(spec: EpisodeSpec, paraphrases: Paraphrases | None) -> Episode:
    """Versions 1 and 2 (same episodes)."""
    pool = POOLS[spec.domain]
    rng = random.Random(_seed(spec, "graph"))
    for _ in range(MAX_ATTEMPTS):
        ids, by_id, deps = _sample_graph(rng, pool, spec.steps, spec.density)
        plan = _plan(rng, ids, deps)
        if plan is not None and sum(k != "filler" for k, _ in plan.events) <= N_TURNS:
            break
    else:  # pragma: no cover - every supported spec plans within a few attempts (tested)
        raise SpecError(f"could not plan an episode for {spec}")

    steps, revision = _steps_and_revision(rng, ids, by_id, deps, plan)
    texts = {s.id: s.text for s in steps}

    # Fillers fill the 44 turns; events keep their order.
    events: list[_Event] = list(plan.events)
    slots = set(rng.sample(range(N_TURNS), len(events)))
    it = iter(events)
    schedule: list[_Event] = [next(it) if i in slots else ("filler", None) for i in range(N_TURNS)]
    schedule = _add_ambiguous(spec, schedule, deps, plan)
    work_orders = iter(rng.sample(range(1000, 10000), N_TURNS))

    words = random.Random(_seed(spec, "words"))
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
            text = _wording(by_id[v], kind, idx, spec.paraphrase_tier, paraphrases).format(wo=wo)
        turns.append(Turn(index=i, kind=kind, step=v, work_order=wo, text=text))

    return Episode(
        spec=spec,
        steps=steps,
        revision=revision,
        turns=tuple(turns),
        brief=render_brief(steps, spec.brief),
    )


def _plan_v3(
    spec: EpisodeSpec, pool: DomainPool
) -> tuple[list[str], dict[str, Template], dict[str, frozenset[str]], sampler.Plan, random.Random]:
    """Graph and revision from the graph stream; each schedule from its own stream. An attempt
    is kept only when both schedules can carry the trap budget, so the earlier and the
    regenerated schedule of a seed share graph, revision, codes and work orders."""
    rng = random.Random(_seed(spec, "graph-v3"))
    want = spec.schedule_version()
    for attempt in range(MAX_ATTEMPTS):
        ids, by_id, deps = sampler.sample_graph(rng, pool, spec.steps, spec.density)
        revised = sampler.revise(rng, ids, deps)
        plans = {
            sched: sampler.plan(
                random.Random(_seed(spec, f"schedule-v3|{sched}|{attempt}")),
                ids,
                deps,
                revised,
                sched,
            )
            for sched in ("earlier", "regenerated")
        }
        chosen = plans[want]
        if all(p is not None for p in plans.values()) and chosen is not None:
            return ids, by_id, deps, chosen, rng
    raise SpecError(f"could not plan an episode for {spec}")  # pragma: no cover - tested


def _generate_v3(spec: EpisodeSpec, paraphrases: Paraphrases | None) -> Episode:
    pool = POOLS[spec.domain]
    ids, by_id, deps, plan, rng = _plan_v3(spec, pool)
    steps, revision = _steps_and_revision(rng, ids, by_id, deps, plan)
    texts = {s.id: s.text for s in steps}
    events = plan.events
    slots = set(rng.sample(range(N_TURNS), len(events)))
    it = iter(events)
    schedule: list[_Event] = [next(it) if i in slots else ("filler", None) for i in range(N_TURNS)]
    work_orders = iter(rng.sample(range(1000, 10000), N_TURNS))
    # Ambiguous-probe candidates: each filler with probability rate (own stream); the scripted
    # user serves one as a probe iff two steps are eligible on the realized state then.
    amb = random.Random(_seed(spec, f"ambiguous-v3|{spec.ambiguous_rate!r}"))
    candidate = [k == "filler" and amb.random() < spec.ambiguous_rate for k, _ in schedule]
    words = random.Random(_seed(spec, "words"))
    held = random.Random(_seed(spec, "held-out"))
    turns: list[Turn] = []
    for i, (kind, v) in enumerate(schedule):
        idx = words.randrange(3)
        rewrite = held.randrange(3) if spec.paraphrase_tier == 2 else 0
        if kind == "revision":
            turns.append(Turn(index=i, kind=kind, step=None, work_order=None, text=revision.text))
            continue
        if kind == "filler":
            text = pool.fillers[words.randrange(len(pool.fillers))]
            wo = f"#W{next(work_orders)}" if candidate[i] else None
            turns.append(
                Turn(
                    index=i,
                    kind="ambiguous" if candidate[i] else "filler",
                    step=None,
                    work_order=wo,
                    text=text,
                )
            )
            continue
        assert v is not None
        wo = f"#W{next(work_orders)}"
        worded = _wording_v3(by_id[v], kind, idx, rewrite, spec.paraphrase_tier, paraphrases)
        if worded is None:
            text = pool.re_asks[idx].format(text=texts[v], wo=wo)
        else:
            text = worded.format(wo=wo)
        turns.append(Turn(index=i, kind=kind, step=v, work_order=wo, text=text))
    held_out: dict[str, tuple[str, ...]] = {}
    if spec.paraphrase_tier == 2 and paraphrases is not None:
        held_out = {
            v: tuple(str(r) for group in paraphrases[by_id[v].slug]["asks"] for r in group)
            for v in ids
        }
    return Episode(
        spec=spec,
        steps=steps,
        revision=revision,
        turns=tuple(turns),
        brief=render_brief(steps, spec.brief),
        held_out_asks=held_out,
    )


def _add_ambiguous(
    spec: EpisodeSpec,
    schedule: list[_Event],
    deps: Mapping[str, frozenset[str]],
    plan: _Plan,
) -> list[_Event]:
    """Turn fillers into ambiguous probes at ``spec.ambiguous_rate`` (own RNG stream)."""
    if spec.ambiguous_rate <= 0:
        return schedule
    rng = random.Random(_seed(spec, f"ambiguous|{spec.ambiguous_rate!r}"))
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
