"""Generator version 4 (issue #27): the revision midway in both schedules, ambiguous probes
planned on the perfect-play state, re-asks worded as asks; versions 1-3 unchanged."""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec
import pytest

from protocol import EpisodeSpec, ScriptedUser, generate
from protocol.config import Schedule
from protocol.domains.known import POOLS
from protocol.episode.ambiguous import PLANNED_MIN_ELIGIBLE
from protocol.episode.stats import ScheduleFigures, schedule_figures
from protocol.episode.versions import GENERATOR_VERSION, GENERATOR_VERSIONS
from tests.conftest import play_perfect
from tests.protocol.episode.test_generate_v3 import _cache

SEEDS = range(100, 228)
V4: dict[str, Any] = {"generator": 4}


def spec(seed: int, steps: int, density: float, **kw: Any) -> EpisodeSpec:
    return EpisodeSpec(seed=seed, steps=steps, density=density, **{**V4, **kw})


def _digest(generator: int) -> str:
    d = hashlib.sha256()
    cache = _cache()
    for seed in (100, 227):
        for kw in (
            {},
            {"brief": "original"},
            {"ambiguous_rate": 0.15},
            {"paraphrase_tier": 1},
            {"paraphrase_tier": 2},
            {"domain": "release"},
        ):
            for steps, density in ((5, 0.15), (15, 0.3)):
                s = EpisodeSpec(seed=seed, steps=steps, density=density, generator=generator, **kw)
                ep = generate(s, cache if kw.get("paraphrase_tier") == 2 else None)
                d.update(msgspec.json.encode(ep))
                for turn, verdict, act, _ in play_perfect(ep):
                    d.update(msgspec.json.encode((turn, verdict, act)))
    return d.hexdigest()


# Computed on the commit before version 4 (episodes and the perfect agent's served turns).
PINNED = {
    1: "31376b18de4203ea727e738f7aec13bf408fe3c857089b9f1968ee117d8dd71d",
    2: "4b58420db1b9693f22dd9e88c8e1eb882211667538f54dd67672807e773f2f28",
    3: "c1fb672dd2181c7a5a2c2dfe438eb72a547c13ca4ce3b54e1fa34e65d0fadb46",
    4: "ef7768981bad01a47fb7a02a373e3d65e9c8d5a5d775606a79ac70f4892111fa",
}


def test_every_version_up_to_4_is_pinned() -> None:
    # new runs use version 5 (issue #37; tests/protocol/stress/test_doses.py pins it)
    assert GENERATOR_VERSION == 5 and GENERATOR_VERSIONS == (1, 2, 3, 4, 5, 6)
    assert {g: _digest(g) for g in GENERATOR_VERSIONS if g <= 4} == PINNED


SCHEDULES: tuple[Schedule, ...] = ("earlier", "regenerated")


def _figures(gen: int, steps: int, density: float, schedule: Schedule) -> ScheduleFigures:
    return schedule_figures(
        generate(
            EpisodeSpec(seed=s, steps=steps, density=density, generator=gen, schedule=schedule)
        )
        for s in SEEDS
    )


@pytest.mark.parametrize(("steps", "density"), [(5, 0.15), (10, 0.15), (15, 0.3), (18, 0.15)])
def test_the_revision_comes_midway_in_both_schedules(steps: int, density: float) -> None:
    earlier = _figures(4, steps, density, "earlier")
    regenerated = _figures(4, steps, density, "regenerated")
    assert abs(earlier.revision_mean - regenerated.revision_mean) <= 1.0
    assert earlier.no_ask_after == regenerated.no_ask_after == 0
    # Version 3 pushed the earlier schedule's revision late (issue #27's measurement).
    old = _figures(3, steps, density, "earlier")
    assert old.revision_mean - regenerated.revision_mean > 3.5


def test_the_revision_figures_are_pinned() -> None:
    # The figures docs/protocol.md quotes (seeds 100-227; `ladder generate --summary`).
    got = {
        (sched, steps): (f.revision_mean, f.no_ask_after, f.revised_asked_after)
        for steps, density in ((10, 0.15), (15, 0.3))
        for sched in SCHEDULES
        for f in [_figures(4, steps, density, sched)]
    }
    assert got == {
        ("earlier", 10): (19.64, 0, 114),
        ("regenerated", 10): (20.46, 0, 116),
        ("earlier", 15): (21.41, 0, 116),
        ("regenerated", 15): (20.69, 0, 116),
    }
    assert _figures(3, 10, 0.15, "earlier").revision_mean == 25.7
    assert _figures(3, 10, 0.15, "regenerated").revision_mean == 20.14


@pytest.mark.parametrize(("steps", "density"), [(5, 0.15), (10, 0.15), (15, 0.3), (18, 0.15)])
def test_each_schedule_keeps_its_step_turns_and_asks_the_cancelled_step_first(
    steps: int, density: float
) -> None:
    for seed in SEEDS:
        for sched, extra in (("earlier", 6), ("regenerated", 5)):
            ep = generate(spec(seed, steps, density, schedule=sched, ambiguous_rate=0.15))
            served = list(play_perfect(ep))
            assert all(not errors and not t.dynamic for t, _, _, errors in served)
            asks = sum(t.kind not in ("filler", "revision", "ambiguous") for t, *_ in served)
            assert asks == steps + extra, (seed, sched)
            rev_at = next(t.index for t in ep.turns if t.kind == "revision")
            cancelled = [
                t.index
                for t in ep.turns
                if t.step == ep.revision.cancel and t.kind in ("ask", "re_ask")
            ]
            assert cancelled == ([] if sched == "regenerated" else cancelled[:1])
            assert all(i < rev_at for i in cancelled)


def _served_probes(ep_spec: EpisodeSpec, books: bool) -> list[tuple[str, tuple[str, ...]]]:
    """(work order, named steps) of every probe served (dynamic re-asks shift indices)."""
    ep = generate(ep_spec)
    user = ScriptedUser(ep)
    out = []
    while (turn := user.next_turn()) is not None:
        if turn.kind == "ambiguous":
            out.append((turn.work_order or "", turn.named))
        verdict = user.begin(turn)
        ok = verdict is not None and verdict.label in ("eligible", "redo")
        user.finish(turn, verdict, [turn.step] if books and ok and turn.step else [])
    return out


def test_ambiguous_probes_are_planned_the_same_for_every_agent_at_table_4s_count() -> None:
    counts = {}
    for sched in ("regenerated", "earlier"):
        n = 0
        for seed in range(100, 164):
            s = spec(seed, 15, 0.3, schedule=sched, ambiguous_rate=0.15)
            perfect, never = _served_probes(s, True), _served_probes(s, False)
            assert perfect == never  # a never-booking agent meets the same probes
            ep = generate(s)
            planned = [(t.work_order, t.named) for t in ep.turns if t.kind == "ambiguous"]
            assert planned == perfect
            for t in ep.turns:
                if t.kind == "ambiguous":
                    assert t.work_order is not None and t.work_order in t.text
            n += len(planned)
        counts[sched] = n
    # Table 4: 111 probes over seeds 100..163, S = 15 dense, rate 0.15 (amended brief: the
    # regenerated schedule); the rule needs three eligible steps under perfect play.
    assert PLANNED_MIN_ELIGIBLE == 3
    assert counts == {"regenerated": 121, "earlier": 111}
    assert all(abs(n - 111) <= 10 for n in counts.values())


def test_planned_probes_name_two_steps_eligible_under_perfect_play() -> None:
    for seed in range(100, 140):
        ep = generate(spec(seed, 10, 0.15, ambiguous_rate=0.5))
        user = ScriptedUser(ep)
        while (turn := user.next_turn()) is not None:
            if turn.kind == "ambiguous":
                a, b = turn.named
                eligible = user.state.eligible()
                assert a != b and a in eligible and b in eligible and len(eligible) >= 3
            verdict = user.begin(turn)
            ok = verdict is not None and verdict.label in ("eligible", "redo")
            user.finish(turn, verdict, [turn.step] if ok and turn.step else [])


@pytest.mark.parametrize("tier", [0, 1])
def test_re_asks_use_the_ask_wordings(tier: int) -> None:
    frames = POOLS["procurement"].re_asks
    pool = {t.slug: t for t in POOLS["procurement"].templates}
    seen = 0
    for seed in range(100, 132):
        ep = generate(spec(seed, 15, 0.3, paraphrase_tier=tier))
        for t in ep.turns:
            if t.kind == "re_ask":
                asks = {a.format(wo=t.work_order) for a in pool[ep.step(t.step or "").slug].asks}
                assert t.text in asks
                assert not any(t.text.startswith(f.split("{")[0]) for f in frames)
                seen += 1
    assert seen == 2 * 32
    # Dynamic re-asks (the agent skips the first ask of a step a redo probe later asks,
    # leaving its dependents deferred) are worded as asks too.
    dynamic = []
    for seed in range(100, 116):
        ep = generate(spec(seed, 10, 0.15, paraphrase_tier=tier))
        redo = {t.step for t in ep.turns if t.kind == "redo_probe"}
        user = ScriptedUser(ep)
        skipped: set[str | None] = set()
        while (turn := user.next_turn()) is not None:
            if turn.dynamic:
                template = pool[ep.step(turn.step or "").slug]
                assert turn.text in {a.format(wo=turn.work_order) for a in template.asks}
                dynamic.append(turn)
            verdict = user.begin(turn)
            ok = verdict is not None and verdict.label in ("eligible", "redo")
            skip = turn.kind == "ask" and turn.step in redo and not skipped
            if skip:
                skipped.add(turn.step)
            user.finish(turn, verdict, [turn.step] if ok and turn.step and not skip else [])
    assert len(dynamic) >= 3


def test_ladder_generate_summary_prints_the_figures() -> None:
    from typer.testing import CliRunner

    from ladder.app import app

    args = ["generate", "--seeds", "100-163", "-S", "15", "--density", "0.3"]
    for generator, probes in ((4, 121), (5, 133)):  # 5: domain-free streams (issue #37)
        extra = ["--ambiguous-rate", "0.15", "--summary", "--generator", str(generator)]
        result = CliRunner().invoke(app, [*args, *extra])
        assert result.exit_code == 0, result.output
        figures = msgspec.json.decode(result.stdout.strip(), type=ScheduleFigures)
        assert (figures.episodes, figures.ambiguous, figures.no_ask_after) == (64, probes, 0)
