"""Ask back and escalation (issue #38) end to end on the embedded scripted endpoint: the
oracles in every new cell, and the mechanism each knob is for.

* The perfect agent scores strict success in every cell with show, ask or escalate.
* Always-book behind the enforcement gate with escalate never gains a violating booking: an
  escalation the user refuses stays refused, so its errors are at most its refusal-free
  cell's, and only omissions or refused redos (a correct booking the gate refused).
* With the synthetic helper's matcher_wrong > 0, ask (second reading) recovers misroutes:
  misrouted final readings fall, strict success rises, at a measured burden.
* With a corrupted gate, escalate recovers refused correct bookings (overrides), and every
  override is a booking the user confirmed on a turn whose label allowed it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol import generate, strings
from protocol.arms.askback import answered_step
from protocol.records import EpisodeRecord
from runner.execution.connect import open_endpoints
from runner.execution.scheduler import RunState, pending_tasks, run_grid
from runner.gates.helper_models import Helpers
from runner.grid.expand import parse_grid
from runner.rundir.logs import read_logs
from scoring.replay.episode_score import score_episode

VIOLATIONS = {"re_execution", "superseded", "premature", "unrequested"}
ASKBACK: list[dict[str, Any]] = [
    {"show": True},
    {"ask": "unresolved"},
    {"ask": "second_reading"},
    {"show": True, "ask": "second_reading"},
]


def _grid(
    model: str,
    arms: Sequence[str],
    variants: Sequence[dict[str, Any]],
    *,
    seeds: str = "100-131",
    graph: tuple[int, float] = (10, 0.15),
    ambiguous_rate: float = 0.0,
) -> dict[str, Any]:
    return {
        "run": {
            "seeds": seeds,
            "graphs": [{"steps": graph[0], "density": graph[1]}],
            "arms": list(arms),
            "variants": list(variants),
            "ambiguous_rate": ambiguous_rate,
            "concurrency": 256,
        },
        "endpoints": [{"name": "embedded", "base_url": "embedded", "max_in_flight": 128}],
        "models": [{"name": model, "endpoint": "embedded"}],
    }


async def run(tmp: Path, data: dict[str, Any]) -> dict[str, list[EpisodeRecord]]:
    """Run a grid through the scheduler; its records by cell slug."""
    grid = parse_grid(data)
    async with open_endpoints(grid) as endpoints:
        helpers = Helpers(grid, tmp, endpoints)
        state = RunState(grid=grid, out=tmp, endpoints=endpoints, helpers=helpers)
        tasks, _ = pending_tasks(grid, tmp)
        await run_grid(state, tasks)
    cells: dict[str, list[EpisodeRecord]] = {}
    for r in read_logs(tmp).values():
        assert r.termination == "completed", r.error
        cells.setdefault(r.cell.slug(), []).append(r)
    return cells


def _cell(cells: dict[str, list[EpisodeRecord]], **knobs: object) -> list[EpisodeRecord]:
    """The records of the one cell whose changed knobs are exactly ``knobs`` (and arm)."""
    arm = knobs.pop("arm")
    found = [
        recs
        for recs in cells.values()
        if recs[0].cell.arm == arm and recs[0].cell.knobs.changed() == knobs
    ]
    assert len(found) == 1, (arm, knobs, list(cells))
    return found[0]


def _success(recs: list[EpisodeRecord]) -> int:
    return sum(score_episode(r).primary.success for r in recs)


def _errors(recs: list[EpisodeRecord]) -> list[str]:
    return [e.channel for r in recs for t in score_episode(r).primary.turns for e in t.errors]


def _check_overrides(recs: list[EpisodeRecord]) -> int:
    """Every escalation answered by the rule (a confirmation exactly for a booking of the
    requested step on a turn labelled eligible or redo), each override admitted once and
    never an error of its turn; the number of overrides."""
    overrides = 0
    for r in recs:
        scored = {t.index: t for t in score_episode(r).primary.turns}
        for t in r.turns:
            errors = {(e.step, e.channel) for e in scored[t.index].errors}
            for e in t.escalations:
                ok = e.booking.step == t.step and scored[t.index].label in ("eligible", "redo")
                assert e.confirmed == ok, (r.seed, t.index, e)
                assert (e.booking in t.admitted) == e.confirmed
                assert (e.booking in t.refused) != e.confirmed
                if e.confirmed:
                    overrides += 1
                    assert not {c for v, c in errors if v == e.booking.step}, (r.seed, t.index)
    return overrides


async def test_perfect_agent_is_strict_in_every_askback_cell(tmp_path: Path) -> None:
    variants = [{"arm": a, **k} for a in ("directive", "enforce", "hybrid") for k in ASKBACK]
    variants += [{"arm": a, "escalate": True} for a in ("enforce", "hybrid")]
    variants += [{"arm": "enforce", "show": True, "ask": "second_reading", "escalate": True}]
    cells = await run(
        tmp_path,
        _grid(
            "scripted/perfect", [], variants, seeds="100-115", graph=(15, 0.3), ambiguous_rate=0.15
        ),
    )
    assert len(cells) == len(variants)
    for slug, recs in cells.items():
        assert len(recs) == 16
        for r in recs:
            s = score_episode(r)
            assert s.primary.success and s.decline_aware.success, (slug, r.seed, s.primary)
            assert not s.mismatches, (slug, r.seed)
            assert all(not t.refused and not t.escalations for t in r.turns), (slug, r.seed)
    # the ambiguous probes resolve to no step, so the unresolved ask puts its question there;
    # the user answers with the step it meant, of the two those still eligible (#46), which
    # the perfect agent then books, and the scorer labels the probe with that step's verdict
    for arm in ("directive", "enforce"):
        recs = _cell(cells, arm=arm, ask="unresolved")
        asked = [(r, t) for r in recs for t in r.turns if t.question]
        assert asked and {t.ask_reason for _, t in asked} == {"unresolved"}
        for r, t in asked:
            ep = generate(r.spec)
            meant = answered_step(ep, t.as_turn(), t.answer)
            assert t.kind == "ambiguous" and t.first_match is None and t.matched_step == meant
            assert meant is not None, (r.seed, t.index)  # perfect play leaves both eligible
            assert t.answer == strings.USER_CLARIFY_STEP.format(
                text=ep.step(meant).text, wo=t.work_order
            )
            assert [b.step for b in t.admitted] == [meant], (r.seed, t.index)
            scored = next(x for x in score_episode(r).primary.turns if x.index == t.index)
            assert (scored.step, scored.label, scored.errors) == (meant, "eligible", ())
        burden = [score_episode(r).burden for r in recs]
        assert sum(b.recovered for b in burden if b is not None) == len(asked)
    # a log before #46 held "None of those" there: scored by its rule, the probe asks for no
    # step (the same booking is then unrequested), so old logs rescore to their old scores
    r, t = asked[0]
    old = [
        msgspec.structs.replace(x, answer=strings.USER_CLARIFY_NONE) if x is t else x
        for x in r.turns
    ]
    rescored = score_episode(msgspec.structs.replace(r, turns=tuple(old)))
    probe = next(x for x in rescored.primary.turns if x.index == t.index)
    assert (probe.step, probe.label) == (None, "none")
    assert [e.channel for e in probe.errors] == ["unrequested"]


async def test_always_book_never_gains_a_violating_booking_by_escalating(tmp_path: Path) -> None:
    variants = [
        {"arm": "enforce", "escalate": True},
        {"arm": "enforce", "corruption": 1e-2},
        {"arm": "enforce", "corruption": 1e-2, "escalate": True},
    ]
    cells = await run(tmp_path, _grid("scripted/always-book", ["enforce"], variants))
    plain = _cell(cells, arm="enforce")
    assert _success(_cell(cells, arm="enforce", escalate=True)) == _success(plain) == len(plain)
    corrupted = _cell(cells, arm="enforce", corruption=1e-2)
    escalated = _cell(cells, arm="enforce", corruption=1e-2, escalate=True)
    # the corrupted state itself admits violating bookings (a lost done bit, a dropped edge);
    # escalation adds none: every override is a correct booking, and the user refuses the rest
    assert _check_overrides(escalated) > 0, "a gate corrupted at 1e-2 refuses correct work"
    refused = [e for r in escalated for t in r.turns for e in t.escalations if not e.confirmed]
    assert refused, "always-book books trap turns: the user refuses those escalations"
    violations = [c for c in _errors(escalated) if c in VIOLATIONS]
    assert len(violations) <= len([c for c in _errors(corrupted) if c in VIOLATIONS]) + 2
    assert _success(escalated) >= _success(corrupted)


async def test_ask_recovers_misroutes_at_a_measured_burden(tmp_path: Path) -> None:
    model = "scripted/synthetic?matcher_wrong=0.08&matcher_none=0.05"
    variants = [{"arm": "directive", "ask": "second_reading"}]
    cells = await run(tmp_path, _grid(model, ["directive"], variants, seeds="100-163"))
    plain = _cell(cells, arm="directive")
    asked = _cell(cells, arm="directive", ask="second_reading")

    def misroutes(recs: list[EpisodeRecord]) -> int:
        return sum(
            t.matched_step != t.step
            for r in recs
            for t in r.turns
            if t.step is not None and t.matcher_outcome is not None
        )

    assert misroutes(plain) > 20
    assert misroutes(asked) < misroutes(plain) / 3
    assert _success(asked) > _success(plain)
    questions = sum(t.question is not None for r in asked for t in r.turns)
    assert 0 < questions < 0.5 * sum(t.matcher_outcome is not None for r in asked for t in r.turns)
    # one answer per question, and no question moves a turn's label
    for r in asked:
        for t in r.turns:
            assert (t.question is None) == (t.answer is None)


@pytest.mark.parametrize(
    ("model", "knobs"),
    [
        ("scripted/always-book?compile_cancel_left=1", {}),
        ("scripted/synthetic?obey=0.7", {"corruption": 1e-2}),
    ],
    ids=["miscompiled-always-book", "corrupted-synthetic"],
)
async def test_escalate_recovers_refused_correct_bookings(
    tmp_path: Path, model: str, knobs: dict[str, Any]
) -> None:
    """A gate that refuses correct work (a miscompiled graph, a corrupted state) and an agent
    that books against its directive: the user's confirmations recover those bookings."""
    variants = [{"arm": "enforce", **knobs, "escalate": True}]
    if knobs:
        variants.append({"arm": "enforce", **knobs})
    cells = await run(tmp_path, _grid(model, ["enforce"] if not knobs else [], variants))
    refusing = _cell(cells, arm="enforce", **knobs)
    escalated = _cell(cells, arm="enforce", **knobs, escalate=True)
    assert _check_overrides(escalated) > 0
    assert _success(escalated) > _success(refusing)
    assert _errors(escalated).count("omission") < _errors(refusing).count("omission")


async def test_the_tool_harness_gates_ask_and_escalate(tmp_path: Path) -> None:
    """The harness's gates (Appendix G) with the knobs: the perfect agent stays strict with
    show and ask, and behind a corrupted enforcement gate always-book's refused correct calls
    are overridden once each, every override confirmed by the rule."""
    harness = {"harness": "langgraph"}
    perfect = [
        {"arm": "directive", **harness, "show": True, "ask": "second_reading"},
        {"arm": "enforce", **harness, "show": True, "ask": "unresolved", "escalate": True},
    ]
    cells = await run(
        tmp_path / "p", _grid("scripted/perfect", [], perfect, seeds="300-303", ambiguous_rate=0.15)
    )
    for recs in cells.values():
        assert all(score_episode(r).primary.success for r in recs)
    assert any(t.question for recs in cells.values() for r in recs for t in r.turns)
    corrupted = [
        {"arm": "enforce", **harness, "corruption": 1e-2},
        {"arm": "enforce", **harness, "corruption": 1e-2, "escalate": True},
    ]
    cells = await run(tmp_path / "a", _grid("scripted/always-book", [], corrupted, seeds="100-115"))
    refusing = _cell(cells, arm="enforce", harness="langgraph", corruption=1e-2)
    escalated = _cell(cells, arm="enforce", harness="langgraph", corruption=1e-2, escalate=True)
    overrides = _check_overrides(escalated)
    assert overrides > 0
    executed = [
        c for r in escalated for t in r.turns for c in t.tool_calls if c.outcome == "executed"
    ]
    confirmed = {
        (e.booking.work_order, e.booking.step)
        for r in escalated
        for t in r.turns
        for e in t.escalations
        if e.confirmed
    }
    assert confirmed <= {(c.work_order, c.step) for c in executed}
    assert _success(escalated) >= _success(refusing)


async def test_show_lets_the_synthetic_agent_notice_misroutes(tmp_path: Path) -> None:
    """The synthetic agent's ``doubt``: a shown reading that names another step than its own
    reading of the request sets the directive aside, so misroutes cost fewer omissions."""
    model = "scripted/synthetic?matcher_wrong=0.1"
    cells = await run(tmp_path, _grid(model, ["directive"], [{"arm": "directive", "show": True}]))
    plain = _cell(cells, arm="directive")
    shown = _cell(cells, arm="directive", show=True)
    assert _errors(shown).count("omission") < _errors(plain).count("omission") / 2
    assert _success(shown) > _success(plain)
    lines = [t.arm_text.split("\n")[0] for r in shown for t in r.turns if t.matcher_outcome]
    assert lines and all(x.startswith("[GATE READING] I read this as: ") for x in lines)
