"""The exclusive knob (issue #48, generator 6): the rule in the task-state machine, its
placement on the fixed episode from the seed (an alternative the control never asks for), the
brief that states it and the readings of it."""

from __future__ import annotations

import itertools

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import EpisodeSpec, generate
from protocol.arms.render import render_checklist, render_directive
from protocol.brief import render_exclusive
from protocol.config import Knobs
from protocol.records import Episode
from protocol.rule_strings import EXCLUSIVE_CLAUSE
from protocol.state.compiled import validate
from protocol.state.compiled_parse import parse_graph
from protocol.state.compiled_parse import parse_revision as parse_compiled_revision
from protocol.state.machine import Error, TaskState, Verdict, judge_turn
from protocol.stress.budget import cell_episode
from protocol.stress.doses import perfect_play
from protocol.stress.exclusive import MAX_EXCLUSIVE, exclusive, exclusive_candidates
from serve.agents.brief import parse_brief
from serve.agents.transcript import find_directive, parse_checklist

SEEDS = range(100, 132)
GRAPHS = ((10, 0.3), (15, 0.3), (5, 0.15))
DOSES = tuple(range(1, MAX_EXCLUSIVE + 1))


def _episode(seed: int, steps: int = 10, density: float = 0.3, generator: int = 6) -> Episode:
    return generate(EpisodeSpec(seed=seed, steps=steps, density=density, generator=generator))


# --- the rule ---------------------------------------------------------------------------------


def test_once_one_step_of_a_pair_is_done_the_other_is_closed() -> None:
    state = TaskState({"s1": (), "s2": ("s1",), "s3": ()}, exclusive={"s1": "s3"})
    assert state.verdict("s3") == Verdict("eligible") and state.eligible() == ("s1",)
    state.book("s1")
    assert state.closed("s3") and not state.closed("s1") and state.partner("s3") == "s1"
    assert state.verdict("s3") == Verdict("closed") and state.status("s2") == "todo"
    state.begin_turn("s3")  # no redo word reopens it
    assert state.verdict("s3") == Verdict("closed")
    state.book("s3")  # dynamic ground truth: a wrongly booked alternative closes the first
    assert state.verdict("s1") == Verdict("closed")


def test_a_revision_cancelling_the_done_step_reopens_its_alternative() -> None:
    state = TaskState({"s1": (), "s2": ()}, exclusive={"s1": "s2"})
    state.book("s1")
    assert state.verdict("s2") == Verdict("closed")
    state.apply_revision("s1", {}, None)
    assert state.verdict("s2") == Verdict("eligible") and not state.closed("s2")


def test_running_a_closed_step_is_an_error_of_its_own_channel() -> None:
    assert judge_turn("s3", Verdict("closed"), ["s3"]) == [Error("exclusive_closed", "s3")]
    assert judge_turn("s3", Verdict("closed"), []) == []  # declining it is right


def test_the_arms_say_a_closed_step_and_the_agents_read_it_back() -> None:
    state = TaskState({"s1": (), "s2": ()}, exclusive={"s1": "s2"})
    state.book("s1")
    checklist = render_checklist(state)
    assert "- s2: CLOSED (s1 is done; at most one of the two)" in checklist.splitlines()
    entries = parse_checklist(checklist)
    assert entries is not None and entries["s2"].status == "closed"
    assert entries["s1"].status == "done"
    directive = render_directive("s2", Verdict("closed"))
    found = find_directive(directive)
    assert found is not None and (found.step, found.label) == ("s2", "closed")


# --- generator 6 without the knob is unchanged ------------------------------------------------


def test_without_the_knob_nothing_is_placed() -> None:
    for seed in SEEDS:
        ep = _episode(seed)
        assert exclusive(ep, 0) is ep and cell_episode(ep, Knobs()) is ep
        assert b'"exclusive"' not in msgspec.json.encode(ep)
    old = _episode(100, generator=5)
    assert exclusive(old, 2) is old


# --- the placement ----------------------------------------------------------------------------


def _placed(ep: Episode) -> list[int]:
    return [i for i, t in enumerate(ep.turns) if t.kind == "exclusive_ask"]


@pytest.mark.parametrize(("steps", "density"), GRAPHS)
def test_an_exclusive_pair_stresses_only_its_turns(steps: int, density: float) -> None:
    """Dose K: K fillers after the planned step's perfect-play run become requests for its
    closed alternative; every other turn, its perfect-play label, the episode's length and
    its planned asks are the control's."""
    placed_somewhere = 0
    for seed in SEEDS:
        control = _episode(seed, steps, density)
        base = [p.verdict for p in perfect_play(control)]
        for dose in DOSES:
            ep = exclusive(control, dose)
            if not ep.pairs:
                assert not exclusive_candidates(control) and ep is control
                continue
            placed_somewhere += 1
            ((planned, alt),) = ep.pairs.items()
            assert alt == f"s{steps + 1}" and ep.steps[:-1] == control.steps
            assert all(t.step != alt for t in control.turns)  # the control never asks for it
            slots = _placed(ep)
            assert len(slots) == dose and len(ep.turns) == len(control.turns)
            assert all(control.turns[j].kind == "filler" for j in slots)
            play = [p.verdict for p in perfect_play(ep)]
            assert [v.label for j in slots if (v := play[j]) is not None] == ["closed"] * dose
            off = [i for i in range(len(ep.turns)) if i not in slots]
            assert [ep.turns[i] for i in off] == [control.turns[i] for i in off]
            assert [play[i] for i in off] == [base[i] for i in off]
            assert ep.brief.endswith(render_exclusive({planned: alt}))
    assert placed_somewhere >= len(SEEDS) * len(DOSES) * 0.8


def test_smaller_doses_stress_a_subset_of_the_turns_of_larger_ones() -> None:
    for seed in SEEDS:
        control = _episode(seed, 15)
        placed = [set(_placed(exclusive(control, d))) for d in DOSES]
        assert all(a <= b for a, b in itertools.pairwise(placed))
        assert len({tuple(exclusive(control, d).pairs.items()) for d in DOSES}) == 1


def test_the_placed_work_orders_and_codes_are_fresh() -> None:
    for seed in SEEDS:
        ep = exclusive(_episode(seed, 15), MAX_EXCLUSIVE)
        orders = [t.work_order for t in ep.turns if t.work_order]
        assert len(orders) == len(set(orders))
        codes = [s.code for s in ep.steps]
        assert len(codes) == len(set(codes))


def test_placing_is_idempotent_and_one_rule_per_episode() -> None:
    ep = exclusive(_episode(101, 15), 3)
    assert exclusive(ep, 3) is ep and cell_episode(ep, Knobs(exclusive=3)) is ep


# --- the readings of the rule -----------------------------------------------------------------


def test_the_brief_says_the_rule_and_an_agent_reads_it_back() -> None:
    """The hidden reading: the pair and the alternative the brief states are the episode's."""
    for seed in SEEDS:
        ep = exclusive(_episode(seed, 15), 2)
        parsed = parse_brief(ep.brief)
        assert parsed.exclusive == ep.pairs
        assert [s.id for s in parsed.steps] == [s.id for s in ep.steps]
        assert {s.id: s.code for s in parsed.steps} == {s.id: s.code for s in ep.steps}
        if ep.pairs:
            assert EXCLUSIVE_CLAUSE in ep.brief.splitlines()
    assert parse_brief(_episode(100).brief).exclusive == {}


def test_the_compile_reads_the_pairs_beside_the_papers_fields() -> None:
    steps = '{"s1": {"deps": [], "code": "RC-4321"}, "s2": {"deps": [], "code": "RC-2345"}}'
    graph = parse_graph(f'{{"steps": {steps}, "exclusive": [["S1", "s2"], ["s2", "s1"], 3]}}')
    revision = parse_compiled_revision('{"cancel": null, "rewires": {}, "relax": null}')
    assert graph.pairs == {"s1": "s2"} and validate(graph, revision).passed
    bad = parse_graph(f'{{"steps": {steps}, "exclusive": [["s1", "s9"]]}}')
    assert "exclusive" in validate(bad, revision).flags
    plain = parse_graph(f'{{"steps": {steps}}}')
    assert plain.pairs == {} and b"exclusive" not in msgspec.json.encode(plain)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_the_pair_reading_never_raises(text: str) -> None:
    graph = parse_graph('{"steps": {"s1": {"code": "RC-4321"}}, "exclusive": ' + text + "}")
    assert all(isinstance(b, str) for b in graph.pairs.values())
    parse_brief(EXCLUSIVE_CLAUSE + "\n" + text)
