"""The expiry knob (issue #48, generator 6): the clock and the lapse in the task-state machine,
its placement on the fixed episode from the seed, the brief that states it and its readings."""

from __future__ import annotations

import msgspec
import pytest

from protocol import EpisodeSpec, generate
from protocol.brief import render_expiry
from protocol.config import Knobs
from protocol.records import Episode
from protocol.rule_strings import EXPIRY_CLAUSE
from protocol.state.compiled import validate
from protocol.state.compiled_parse import parse_graph
from protocol.state.compiled_parse import parse_revision as parse_compiled_revision
from protocol.state.machine import Error, TaskState, Verdict, judge_turn
from protocol.stress.budget import cell_episode
from protocol.stress.doses import perfect_play
from protocol.stress.expiry import expiring, expiry_candidates
from serve.agents.brief import parse_brief

SEEDS = range(100, 132)
GRAPHS = ((10, 0.3), (15, 0.3), (5, 0.15))
TURNS = (4, 8, 12)


def _episode(seed: int, steps: int = 10, density: float = 0.3) -> Episode:
    return generate(EpisodeSpec(seed=seed, steps=steps, density=density, generator=6))


def test_a_run_lapses_t_turns_after_the_turn_it_was_made_on() -> None:
    state = TaskState({"s1": (), "s2": ("s1",)}, expiry={"s1": 3})
    state.begin_turn(now=5)
    state.book("s1")
    for now, label in ((6, "done"), (7, "done"), (8, "lapsed"), (20, "lapsed")):
        state.begin_turn(now=now)
        assert state.verdict("s1") == Verdict(label)  # type: ignore[arg-type]
    assert state.status("s2") == "todo"  # a lapse is no revision: s1 counts as done
    state.begin_turn("s1", now=9)
    assert state.verdict("s1") == Verdict("redo")  # an explicit redo stays the paper's
    state.book("s1")  # a new run restarts the clock
    state.begin_turn(now=11)
    assert state.verdict("s1") == Verdict("done")
    copy = state.copy()
    copy.begin_turn(now=12)
    assert copy.verdict("s1") == Verdict("lapsed") and state.now == 11


def test_a_lapsed_step_not_run_again_is_an_error_of_its_own_channel() -> None:
    assert judge_turn("s1", Verdict("lapsed"), []) == [Error("lapse_missed", "s1")]
    assert judge_turn("s1", Verdict("lapsed"), ["s1"]) == []


@pytest.mark.parametrize(("steps", "density"), GRAPHS)
def test_an_expiry_stresses_only_its_two_turns(steps: int, density: float) -> None:
    placed = 0
    for seed in SEEDS:
        control = _episode(seed, steps, density)
        base = [p.verdict for p in perfect_play(control)]
        for t in TURNS:
            ep = expiring(control, t)
            if not ep.lapses:
                assert not expiry_candidates(control, t) and ep is control
                continue
            placed += 1
            slots = [i for i, x in enumerate(ep.turns) if x.kind == "expiry_repeat"]
            assert len(slots) == 2 and len(ep.turns) == len(control.turns)
            assert all(control.turns[j].kind == "filler" for j in slots)
            play = [p.verdict for p in perfect_play(ep)]
            assert [v.label for j in slots if (v := play[j]) is not None] == ["done", "lapsed"]
            off = [i for i in range(len(ep.turns)) if i not in slots]
            assert [ep.turns[i] for i in off] == [control.turns[i] for i in off]
            assert [play[i] for i in off] == [base[i] for i in off]
            assert ep.brief == control.brief + render_expiry(ep.lapses)
            assert cell_episode(control, Knobs(expiry=t)) == ep
    assert placed >= len(SEEDS) * len(TURNS) * 0.7


def test_without_the_knob_nothing_is_placed() -> None:
    ep = _episode(100)
    assert expiring(ep, 0) is ep and b"expiry" not in msgspec.json.encode(ep)
    old = generate(EpisodeSpec(seed=100, steps=10, density=0.3, generator=5))
    assert expiring(old, 6) is old


def test_the_brief_says_the_rule_and_an_agent_reads_it_back() -> None:
    for seed in SEEDS:
        ep = expiring(_episode(seed, 15), 8)
        assert parse_brief(ep.brief).expiry == ep.lapses
        if ep.lapses:
            assert EXPIRY_CLAUSE in ep.brief.splitlines()


def test_the_compile_reads_expiry_beside_the_papers_fields() -> None:
    steps = '{"s1": {"deps": [], "code": "RC-4321"}, "s2": {"deps": ["s1"], "code": "RC-2345"}}'
    graph = parse_graph(f'{{"steps": {steps}, "expiry": {{"s2": 8, "s1": 2.5}}}}')
    revision = parse_compiled_revision('{"cancel": null, "rewires": {}, "relax": null}')
    assert graph.lapses == {"s2": 8} and validate(graph, revision).passed
    bad = parse_graph(f'{{"steps": {steps}, "expiry": {{"s9": 8}}}}')
    assert "expiry" in validate(bad, revision).flags
