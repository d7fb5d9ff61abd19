"""Generator versions 3 and 4: the paper's sampler and schedules (:mod:`protocol.episode.sampler`),
laid out over the 44 turns and worded (Section 4.1, Appendices A.5 and B.1).

Both versions draw the graph and revision from one stream and each schedule from its own, and
keep an attempt only when both schedules can carry the trap budget, so the earlier and the
regenerated schedule of a seed share graph, revision and codes (their work orders, drawn
after the turn slots, differ). Version 4 places
the revision midway in both schedules, plans the ambiguous probes on the perfect-play state
(:mod:`protocol.episode.ambiguous`) and words planned re-asks as asks (:mod:`protocol.episode.versions`).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import msgspec

from protocol.domains.shape import DomainPool, Template
from protocol.episode import sampler
from protocol.episode.ambiguous import plan_probes
from protocol.episode.parts import assemble, steps_and_revision, stream_seed
from protocol.episode.versions import MAX_ATTEMPTS, N_TURNS, Paraphrases, SpecError, pool_of
from protocol.episode.wording import wording_v3
from protocol.records import Episode, EpisodeSpec, Turn, TurnKind

__all__ = ["generate_v3"]

Graph = tuple[list[str], dict[str, Template], dict[str, frozenset[str]]]


def _plan_v3(spec: EpisodeSpec, pool: DomainPool) -> tuple[Graph, sampler.Plan, random.Random]:
    rng = random.Random(stream_seed(spec, "graph-v3"))
    if spec.generator >= 5:  # templates drawn by phase rank, whatever the pack's file order
        pool = msgspec.structs.replace(
            pool, templates=tuple(sorted(pool.templates, key=lambda t: t.phase))
        )
    want = spec.schedule_version()
    for attempt in range(MAX_ATTEMPTS):
        ids, by_id, deps = sampler.sample_graph(rng, pool, spec.steps, spec.density)
        revised = sampler.revise(rng, ids, deps)
        plans = {
            sched: sampler.plan(
                random.Random(stream_seed(spec, f"schedule-v3|{sched}|{attempt}")),
                ids,
                deps,
                revised,
                sched,
                midway=spec.generator >= 4,
            )
            for sched in ("earlier", "regenerated")
        }
        chosen = plans[want]
        if all(p is not None for p in plans.values()) and chosen is not None:
            return (ids, by_id, deps), chosen, rng
    raise SpecError(f"could not plan an episode for {spec}")  # pragma: no cover - tested


def generate_v3(spec: EpisodeSpec, paraphrases: Paraphrases | None) -> Episode:
    """Versions 3 and 4."""
    pool = pool_of(spec)
    (ids, by_id, deps), plan, rng = _plan_v3(spec, pool)
    steps, revision = steps_and_revision(
        rng, ids, by_id, deps, plan.cancel, plan.rewires, plan.relax
    )
    events = plan.events
    slots = set(rng.sample(range(N_TURNS), len(events)))
    it = iter(events)
    schedule = [next(it) if i in slots else ("filler", None) for i in range(N_TURNS)]
    work_orders = iter(rng.sample(range(1000, 10000), N_TURNS))
    if spec.generator >= 4:
        probes = plan_probes(spec, schedule, deps, revision, len(pool.ambiguous))
        candidate = [False] * N_TURNS
    else:
        # Version 3's candidates: each filler with probability rate (own stream); the scripted
        # user serves one as a probe iff enough steps are eligible on the realized state then.
        amb = random.Random(stream_seed(spec, f"ambiguous-v3|{spec.ambiguous_rate!r}"))
        candidate = [k == "filler" and amb.random() < spec.ambiguous_rate for k, _ in schedule]
        probes = [None] * N_TURNS
    worded = _Wording(spec, pool, by_id, {s.id: s.text for s in steps}, paraphrases)
    turns: list[Turn] = []
    for i, (kind, v) in enumerate(schedule):
        turns.append(worded.turn(i, kind, v, probes[i], candidate[i], work_orders, revision.text))
    held_out: dict[str, tuple[str, ...]] = {}
    if spec.paraphrase_tier == 2 and paraphrases is not None:
        held_out = {
            v: tuple(str(r) for group in paraphrases[by_id[v].slug]["asks"] for r in group)
            for v in ids
        }
    return assemble(spec, steps, revision, turns, held_out)


class _Wording:
    """Words each turn of a schedule: the wording streams (``words``, ``held-out``) draw once
    per turn, in schedule order."""

    def __init__(
        self,
        spec: EpisodeSpec,
        pool: DomainPool,
        by_id: dict[str, Template],
        texts: dict[str, str],
        paraphrases: Paraphrases | None,
    ) -> None:
        self.spec, self.pool, self.by_id, self.texts = spec, pool, by_id, texts
        self.paraphrases = paraphrases
        self.words = random.Random(stream_seed(spec, "words"))
        self.held = random.Random(stream_seed(spec, "held-out"))

    def turn(
        self,
        i: int,
        kind: TurnKind,
        v: str | None,
        probe: tuple[str, str, int] | None,
        candidate: bool,
        work_orders: Iterator[int],
        revision_text: str,
    ) -> Turn:
        spec, pool, texts = self.spec, self.pool, self.texts
        idx = self.words.randrange(3)
        rewrite = self.held.randrange(3) if spec.paraphrase_tier == 2 else 0
        if kind == "revision":
            return Turn(index=i, kind=kind, step=None, work_order=None, text=revision_text)
        if probe is not None:
            a, b, frame = probe
            wo = f"#W{next(work_orders)}"
            text = pool.ambiguous[frame].format(a=texts[a], b=texts[b], wo=wo)
            return Turn(
                index=i, kind="ambiguous", step=None, work_order=wo, text=text, named=(a, b)
            )
        if kind == "filler":
            text = pool.fillers[self.words.randrange(len(pool.fillers))]
            cand = f"#W{next(work_orders)}" if candidate else None
            turn_kind: TurnKind = "ambiguous" if candidate else "filler"
            return Turn(index=i, kind=turn_kind, step=None, work_order=cand, text=text)
        assert v is not None
        wo = f"#W{next(work_orders)}"
        worded = wording_v3(
            self.by_id[v],
            kind,
            idx,
            rewrite,
            spec.paraphrase_tier,
            self.paraphrases,
            reask_frames=spec.generator < 4,
        )
        if worded is None:
            text = pool.re_asks[idx].format(text=texts[v], wo=wo)
        else:
            text = worded.format(wo=wo)
        return Turn(index=i, kind=kind, step=v, work_order=wo, text=text)
