"""The trap positions, counted as runs of gaps (#50, eleventh round), are the positions the
rule names gap by gap: for versions 3 on (``sampler._premature_slots``) and for versions
1-2 (``v1._traps``, its picks included), on random graphs, schedules and revisions
(hypothesis). The finished gaps of ``sampler.plan``, and the episodes themselves, are
pinned by test_episodes_pinned.py."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.episode import sampler, v1
from protocol.records import Schedule, TurnKind

Deps = dict[str, frozenset[str]]


@st.composite
def _cases(draw: st.DrawFn) -> tuple[list[str], Deps, Deps, dict[str, int], int, str, int]:
    """(ids, deps, post, done_at, rev, cancelled step, number of base events)."""
    n = draw(st.integers(2, 9))
    ids = [f"s{i}" for i in range(1, n + 1)]

    def graph() -> Deps:
        return {v: frozenset(u for u in ids[:i] if draw(st.booleans())) for i, v in enumerate(ids)}

    deps, post = graph(), graph()
    n_base = draw(st.integers(n, 2 * n))
    asked = draw(st.lists(st.sampled_from(ids), unique=True, min_size=n - 1, max_size=n))
    at = draw(
        st.lists(st.integers(0, n_base - 1), unique=True, min_size=len(asked), max_size=len(asked))
    )
    done_at = dict(zip(asked, at, strict=True))
    rev = draw(st.integers(0, n_base))
    c = draw(st.sampled_from(ids))
    return ids, deps, post, done_at, rev, c, n_base


def _slots_by_gap(
    ids: list[str],
    deps: Deps,
    post: Deps,
    done_at: dict[str, int],
    rev: int,
    c: str,
    n_base: int,
    schedule: str,
) -> list[tuple[str, int]]:
    """The rule read gap by gap (the code before the eleventh round)."""
    never = n_base + 1
    blocked = schedule == "earlier" or any(done_at.get(u, never) > rev for u in deps[c])
    return [
        (p, g)
        for p in ids
        for g in range(n_base + 1)
        if (p != c or g <= rev)
        and g <= done_at.get(p, never)
        and (p != c or blocked)
        and any(done_at.get(u, never) >= g for u in (deps if g <= rev else post)[p])
    ]


@settings(max_examples=300, deadline=None)
@given(_cases(), st.sampled_from(("earlier", "regenerated")))
def test_premature_slots_are_the_gap_by_gap_rule(
    case: tuple[list[str], Deps, Deps, dict[str, int], int, str, int], schedule: Schedule
) -> None:
    ids, deps, post, done_at, rev, c, n_base = case
    # the cancelled step's prerequisites are asked (as every plan that reaches the slots has)
    done_at = {**{u: n_base - 1 for u in deps[c] if u not in done_at}, **done_at}
    revised: sampler.Revised = (c, {}, None, post)
    got = sampler._premature_slots(ids, deps, revised, schedule, done_at, rev, n_base)
    assert got == _slots_by_gap(ids, deps, post, done_at, rev, c, n_base, schedule)


@settings(max_examples=300, deadline=None)
@given(_cases(), st.integers(0, 2**32))
def test_version_one_traps_are_the_gap_by_gap_rule(
    case: tuple[list[str], Deps, Deps, dict[str, int], int, str, int], seed: int
) -> None:
    ids, deps, post, _, _, _, _ = case
    base: list[tuple[TurnKind, str | None]] = [("ask", v) for v in ids[:-1]]
    rev = len(base) // 2
    base.insert(rev, ("revision", None))
    pending = ids[:-1]
    got = v1._traps(random.Random(seed), pending, base, rev, deps, post)
    # the same draws from the lists the rule names gap by gap
    done_at = {v: i for i, (_, v) in enumerate(base) if v is not None}
    never = len(base) + 1
    gaps = range(len(base) + 1)
    premature = [
        (p, g)
        for p in pending
        for g in gaps
        if g <= done_at[p]
        and any(done_at.get(u, never) >= g for u in (deps if g <= rev else post)[p])
    ]
    done_gaps = [(r, g) for r in pending for g in gaps if done_at.get(r, never) < g]
    rng = random.Random(seed)
    p2, r2 = v1._pick(rng, premature, 2, set()), v1._pick(rng, done_gaps, 2, set())
    legit = v1._pick(rng, done_gaps, 1, {r for r, _ in r2}) or v1._pick(rng, done_gaps, 1, set())
    want = None if len(p2) < 2 or len(r2) < 2 or not legit else (p2, r2, legit)
    assert got == want
