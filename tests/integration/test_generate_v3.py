"""Generator version 3: the paper's sampler, the two schedule versions, premature asks as
asks, held-out re-asks, ambiguous probes on the realized state (issue #12, "Episodes")."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import msgspec
import pytest

from protocol import EpisodeSpec, ScriptedUser, SpecError, generate
from protocol.domains.known import POOLS
from protocol.episode.versions import GENERATOR_VERSION, TRAP_BUDGET
from protocol.user import AMBIGUOUS_MIN_ELIGIBLE
from serve.endpoint.app import start_server, stop_server
from tests.conftest import play_perfect
from tests.serve_driver import drive

SEEDS = range(100, 228)
V3: dict[str, Any] = {"generator": 3}
EXPECTED_LABEL = {
    "ask": "eligible",
    "re_ask": "eligible",
    "premature": "blocked",
    "redo_probe": "done",
    "superseded_cue": "cancelled",
    "legit_redo": "redo",
}


def spec(seed: int, steps: int, density: float, **kw: Any) -> EpisodeSpec:
    return EpisodeSpec(seed=seed, steps=steps, density=density, **{**V3, **kw})


def matcher_turns(ep_spec: EpisodeSpec) -> int:
    """Non-filler, non-revision turns a perfect agent is served (one matcher call each)."""
    n = 0
    for turn, verdict, _, errors in play_perfect(generate(ep_spec)):
        assert errors == [] and not turn.dynamic, (ep_spec, turn)
        assert (verdict.label if verdict else None) == EXPECTED_LABEL.get(turn.kind), turn
        n += turn.kind not in ("filler", "revision")
    return n


def test_old_specs_read_as_version_1() -> None:
    old = msgspec.json.decode(b'{"seed": 1, "steps": 5, "density": 0.15}', type=EpisodeSpec)
    assert old.generator == 1 and old.schedule is None
    with pytest.raises(SpecError, match="unknown generator version 9"):
        generate(spec(100, 5, 0.15, generator=9))
    with pytest.raises(SpecError, match="need generator version 3"):
        generate(EpisodeSpec(seed=1, steps=5, density=0.15, schedule="earlier"))


@pytest.mark.parametrize(("steps", "density"), [(10, 0.15), (15, 0.3)])
def test_earlier_schedule_has_table_7s_helper_calls(steps: int, density: float) -> None:
    # Table 7: 16 and 21 helper calls per episode at S = 10 and S = 15 dense (original brief).
    for seed in SEEDS:
        assert matcher_turns(spec(seed, steps, density, brief="original")) == steps + 6
        assert matcher_turns(spec(seed, steps, density, schedule="regenerated")) == steps + 5


def test_the_brief_picks_its_schedule_and_both_schedules_share_the_graph() -> None:
    for seed in (100, 150, 227):
        orig = generate(spec(seed, 10, 0.15, brief="original"))
        amended = generate(spec(seed, 10, 0.15))
        control = generate(spec(seed, 10, 0.15, brief="original", schedule="regenerated"))
        assert orig.spec.schedule_version() == "earlier"
        assert amended.spec.schedule_version() == "regenerated"
        assert orig.steps == amended.steps == control.steps
        assert orig.revision == amended.revision
        # The schedule control differs from the original grid in schedule, not in brief.
        assert control.brief == orig.brief
        assert [(t.kind, t.step) for t in control.turns] == [
            (t.kind, t.step) for t in amended.turns
        ]
        assert [(t.kind, t.step) for t in control.turns] != [(t.kind, t.step) for t in orig.turns]


def test_earlier_schedule_asks_the_cancelled_step_before_the_revision() -> None:
    for seed in SEEDS:
        ep = generate(spec(seed, 10, 0.15, brief="original"))
        rev_at = next(t.index for t in ep.turns if t.kind == "revision")
        asks = [t for t in ep.turns if t.step == ep.revision.cancel and t.kind in ("ask", "re_ask")]
        assert len(asks) == 1 and asks[0].index < rev_at


def test_sampler_forces_no_edge_and_allows_bare_revisions() -> None:
    edges: Counter[int] = Counter()
    one_edge_cancel_only: list[int] = []
    kinds: Counter[str] = Counter()
    for seed in SEEDS:
        ep = generate(spec(seed, 5, 0.15, brief="original"))
        n = sum(len(s.deps) for s in ep.steps)
        edges[n] += 1
        rev = ep.revision
        kinds["no_dependent"] += not rev.rewires
        kinds["null_relax"] += rev.relax is None
        if n == 1 and not rev.rewires and rev.relax is None:
            one_edge_cancel_only.append(seed)
            assert rev.text.count("'") == 2  # names the cancelled step only
        for t in ep.turns:
            if t.kind in TRAP_BUDGET:
                kinds[t.kind] += 1
    assert edges[1] > 0 and min(edges) == 1  # version 1: at least two edges at S = 5
    assert kinds["no_dependent"] > 0 and kinds["null_relax"] > 0
    assert one_edge_cancel_only  # Appendix B.1's shape: one edge, a cancel-only revision
    assert all(kinds[k] == n * len(SEEDS) for k, n in TRAP_BUDGET.items())


def test_premature_asks_may_target_the_cancelled_step() -> None:
    hits = 0
    for seed in SEEDS:
        ep = generate(spec(seed, 5, 0.15, brief="original"))
        hits += any(t.kind == "premature" and t.step == ep.revision.cancel for t in ep.turns)
    assert hits > 0


def test_premature_asks_use_the_ask_wordings() -> None:
    for seed in range(100, 132):
        ep = generate(spec(seed, 15, 0.3))
        pool = {t.slug: t for t in POOLS["procurement"].templates}
        for t in ep.turns:
            if t.kind == "premature":
                assert t.work_order is not None
                template = pool[ep.step(t.step or "").slug]
                assert t.text in {a.format(wo=t.work_order) for a in template.asks}
                assert t.text not in {a.format(wo=t.work_order) for a in template.premature}


def _cache() -> dict[str, dict[str, list[list[str]]]]:
    return {
        t.slug: {
            kind: [
                [f"HELD {kind} {t.slug} {i}.{r} {t.text} ({{wo}})." for r in range(3)]
                for i in range(3)
            ]
            for kind in ("asks", "redo_probes")
        }
        for t in POOLS["procurement"].templates
    }


def test_held_out_tier_rewrites_asks_premature_asks_re_asks_and_redo_probes() -> None:
    cache = _cache()
    seen: Counter[str] = Counter()
    for seed in range(100, 110):
        ep = generate(spec(seed, 10, 0.15, paraphrase_tier=2), cache)
        for t in ep.turns:
            if t.kind in ("ask", "premature", "re_ask"):
                assert t.text.startswith("HELD asks "), t
            elif t.kind == "redo_probe":
                assert t.text.startswith("HELD redo_probes "), t
            elif t.kind in ("superseded_cue", "legit_redo"):
                assert not t.text.startswith("HELD")
            seen[t.kind] += 1
    assert seen["re_ask"] > 0 and seen["premature"] > 0
    # The tier-0 twin has the same graph and schedule (wording streams are separate).
    base = generate(spec(100, 10, 0.15))
    held = generate(spec(100, 10, 0.15, paraphrase_tier=2), cache)
    assert [(t.kind, t.step, t.work_order) for t in base.turns] == [
        (t.kind, t.step, t.work_order) for t in held.turns
    ]


def test_ambiguous_probes_follow_the_realized_state_at_table_4s_rate() -> None:
    served = 0
    expected = 0.0
    for seed in range(100, 164):
        ep = generate(spec(seed, 15, 0.3, ambiguous_rate=0.15))
        user = ScriptedUser(ep)
        while (turn := user.next_turn()) is not None:
            eligible = user.state.eligible()
            if turn.kind == "ambiguous":
                served += 1
                a, b = turn.named
                assert a in eligible and b in eligible and a != b
                assert turn.work_order is not None and turn.work_order in turn.text
            verdict = user.begin(turn)
            act = [turn.step] if verdict and verdict.label in ("eligible", "redo") else []
            assert user.finish(turn, verdict, [s for s in act if s]) == []
        full = generate(spec(seed, 15, 0.3, ambiguous_rate=1.0))
        for turn, _, _, _ in play_perfect(full):
            expected += 0.15 * (turn.kind == "ambiguous")
    # Table 4: 111 probes over seeds 100..163 at rate 0.15.
    assert AMBIGUOUS_MIN_ELIGIBLE == 3
    assert 100 <= expected <= 120
    assert 80 <= served <= 140


def test_an_ambiguous_candidate_without_two_eligible_steps_is_a_filler() -> None:
    ep = generate(spec(100, 5, 0.15, ambiguous_rate=1.0))
    user = ScriptedUser(ep)
    kinds: Counter[str] = Counter()
    while (turn := user.next_turn()) is not None:
        if turn.kind == "filler":
            assert turn.work_order is None and turn.named == ()
        kinds[turn.kind] += 1
        verdict = user.begin(turn)
        user.finish(turn, verdict, [])  # an agent that books nothing keeps steps eligible
    assert kinds["ambiguous"] > 0


def test_version_3_is_byte_identical_and_pinned() -> None:
    digest = hashlib.sha256()
    for seed in (100, 101, 227):
        for sched in ("earlier", "regenerated"):
            s = spec(seed, 15, 0.3, schedule=sched, ambiguous_rate=0.15)
            one = msgspec.json.encode(generate(s))
            assert one == msgspec.json.encode(generate(s))
            digest.update(one)
    assert len(digest.hexdigest()) == 64


# --- the perfect scripted agent on version-3 episodes (every arm) ---------------------------

SPECIAL = [
    spec(148, 5, 0.15, brief="original"),  # one edge (s3 requires s4), s3 cancelled, cancel only
    spec(128, 5, 0.15, brief="original"),  # one edge, cancel-only, premature asks of the cancelled
    spec(100, 5, 0.15, brief="original"),
    spec(104, 10, 0.15, brief="original"),
    spec(105, 15, 0.3),
    spec(106, 15, 0.3, brief="original", schedule="regenerated"),
    spec(107, 12, 0.3, ambiguous_rate=0.5),
]


@pytest.fixture
async def endpoint() -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    runner, url = await start_server()
    async with aiohttp.ClientSession(headers={"Content-Type": "application/json"}) as session:
        yield session, url
    await stop_server(runner)


def test_the_special_cases_are_what_they_claim() -> None:
    for s in SPECIAL[:2]:
        ep = generate(s)
        assert sum(len(st.deps) for st in ep.steps) == 1
        assert ep.revision.rewires == {} and ep.revision.relax is None


@pytest.mark.parametrize(
    "variant",
    [
        {"arm": "raw"},
        {"arm": "checklist"},
        {"arm": "checklist", "replace": True},
        {"arm": "matched", "replace": True},
        {"arm": "directive"},
        {"arm": "ledger"},
        {"arm": "tools"},
        {"arm": "enforce"},
        {"arm": "enforce", "same_turn": True},
    ],
    ids=lambda v: "-".join(str(x) for x in v.values()),
)
async def test_perfect_agent_scores_one_on_version_3_in_every_arm(
    endpoint: tuple[aiohttp.ClientSession, str], variant: dict[str, Any]
) -> None:
    session, url = endpoint
    for s in SPECIAL:
        out = await drive(session, url, s, **variant)
        assert out.errors == [], (s, out.errors[:3])


# --- the held-out cache is checked on load ------------------------------------------------


def test_a_well_formed_cache_passes_and_each_problem_is_one_line() -> None:
    from protocol.episode.paraphrases import check_paraphrases

    pool = POOLS["procurement"]
    good = _cache()
    assert check_paraphrases(good, pool) == []
    bad = msgspec.json.decode(msgspec.json.encode(good))
    first = pool.templates[0].slug
    bad[first]["asks"][0][1] = bad[first]["asks"][0][0]  # a duplicate string
    bad[first]["redo_probes"][2] = ["only one ({wo})"]  # too few rewrites
    bad[pool.templates[1].slug]["asks"][1][0] = "Do the thing ({wo})."  # loses the noun
    bad[pool.templates[2].slug]["asks"][2][2] = pool.templates[2].text + " now."
    del bad[pool.templates[3].slug]
    problems = check_paraphrases(bad, pool)
    assert len(problems) == 5, problems
    assert any("same string" in p for p in problems)
    assert any("exactly 3 rewrites" in p for p in problems)
    assert any("keeps no word" in p for p in problems)
    assert any("{wo}" in p for p in problems)
    assert any(p.startswith(f"{pool.templates[3].slug}: missing") for p in problems)
    assert check_paraphrases([1, 2], pool) == [
        "the cache must be a JSON object: template slug -> wordings"
    ]


def test_ladder_generate_refuses_a_bad_cache_with_one_line_per_problem(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from ladder.app import app

    cache = _cache()
    del cache[POOLS["procurement"].templates[0].slug]
    path = tmp_path / "cache.json"
    path.write_bytes(msgspec.json.encode(cache))
    result = CliRunner().invoke(
        app, ["generate", "--paraphrase-tier", "2", "--paraphrase-cache", str(path)]
    )
    assert result.exit_code == 2
    assert "missing (every template of procurement needs rewrites)" in result.output
    assert "Traceback" not in result.output
    path.write_bytes(msgspec.json.encode(_cache()))
    ok = CliRunner().invoke(
        app,
        [
            "generate",
            "--paraphrase-tier",
            "2",
            "--paraphrase-cache",
            str(path),
            "--brief",
            "original",
            "--schedule",
            "regenerated",
        ],
    )
    assert ok.exit_code == 0, ok.output
    assert f"schedule=regenerated generator={GENERATOR_VERSION}" in ok.output
    assert "HELD asks" in ok.output


def test_the_grid_makes_schedule_an_axis_of_the_cell() -> None:
    from runner.grid.expand import expand, parse_grid

    grid = parse_grid(
        {
            "run": {
                "seeds": "100-101",
                "briefs": ["original"],
                "schedules": ["earlier", "regenerated"],
                "arms": ["raw"],
            },
            "models": [{"name": "m"}],
        }
    )
    cells = grid.cells()
    assert [c.schedule for c in cells] == ["earlier", "regenerated"]
    assert cells[0].slug().endswith("__original__raw__sched-earlier")
    tasks = list(expand(grid))
    assert {(t.spec.schedule, t.spec.generator) for t in tasks} == {
        ("earlier", GENERATOR_VERSION),
        ("regenerated", GENERATOR_VERSION),
    }
    plain = parse_grid({"run": {"arms": ["raw"]}, "models": [{"name": "m"}]})
    assert plain.cells()[0].slug() == "m__no-think__S15__rho0.3__procurement__amended__raw"
    from runner.grid.expand import GridError

    with pytest.raises(GridError, match="schedules need generator version 3"):
        parse_grid({"run": {"generator": 1, "schedules": ["earlier"]}, "models": [{"name": "m"}]})


def test_dynamic_re_asks_use_the_held_out_cache_at_tier_2() -> None:
    cache = _cache()
    seen = 0
    for seed in range(100, 140):
        ep = generate(spec(seed, 5, 0.3, paraphrase_tier=2), cache)
        assert set(ep.held_out_asks) == {s.id for s in ep.steps}
        user = ScriptedUser(ep)
        while (turn := user.next_turn()) is not None:
            if turn.dynamic:
                seen += 1
                assert turn.text.startswith("HELD asks "), turn
            verdict = user.begin(turn)
            user.finish(turn, verdict, [])  # never books: deferred steps get re-asked
    assert seen > 0
    flat = {slug: {"asks": ["flat ({wo})."]} for slug in cache}
    with pytest.raises(SpecError, match="paraphrase cache has no asks rewrite"):
        generate(spec(100, 5, 0.3, paraphrase_tier=2), flat)
    assert generate(spec(100, 5, 0.3)).held_out_asks == {}
