"""The budget knob (issue #48, generator 6): the rule in the task-state machine, its placement
on the fixed episode from the seed, the brief that states it and the readings of it."""

from __future__ import annotations

import itertools

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import EpisodeSpec, generate
from protocol.brief import render_budgets
from protocol.config import Knobs
from protocol.records import Episode
from protocol.rule_strings import BUDGET_CLAUSE
from protocol.state.compiled import validate
from protocol.state.compiled_parse import parse_graph
from protocol.state.compiled_parse import parse_revision as parse_compiled_revision
from protocol.state.machine import Error, TaskState, Verdict, judge_turn
from protocol.stress.budget import MAX_BUDGET, budgeted, candidates, cell_episode
from protocol.stress.doses import perfect_play
from serve.agents.brief import parse_brief

SEEDS = range(100, 132)
GRAPHS = ((10, 0.3), (15, 0.3), (5, 0.15))
CAPS = tuple(range(1, MAX_BUDGET + 1))


def _episode(seed: int, steps: int = 10, density: float = 0.3, generator: int = 6) -> Episode:
    return generate(EpisodeSpec(seed=seed, steps=steps, density=density, generator=generator))


# --- the rule ---------------------------------------------------------------------------------


def test_a_budgeted_step_is_eligible_until_its_runs_are_used() -> None:
    state = TaskState({"s1": (), "s2": ("s1",)}, budgets={"s1": 2})
    assert state.verdict("s1") == Verdict("eligible") and state.remaining("s1") == 2
    state.book("s1")
    assert state.status("s1") == "done" and state.status("s2") == "todo"
    assert state.verdict("s1") == Verdict("eligible") and state.remaining("s1") == 1
    state.book("s1")
    assert state.verdict("s1") == Verdict("spent") and state.remaining("s1") == 0
    state.begin_turn("s1")  # an explicit redo stays the paper's
    assert state.verdict("s1") == Verdict("redo")
    state.book("s2")
    assert state.verdict("s2") == Verdict("done") and state.remaining("s2") is None


def test_a_step_run_beyond_its_budget_is_an_error_of_its_own_channel() -> None:
    assert judge_turn("s1", Verdict("spent"), ["s1"]) == [Error("over_budget", "s1")]
    assert judge_turn("s1", Verdict("spent"), []) == []  # declining it is right


def test_a_refused_booking_taken_back_returns_its_run() -> None:
    state = TaskState({"s1": ()}, budgets={"s1": 2})
    state.book("s1")
    state.book("s1")
    state.unbook("s1", 1)
    assert state.verdict("s1") == Verdict("eligible")
    state.unbook("s1", 0)
    assert state.status("s1") == "todo"


def test_a_copy_keeps_its_runs_apart() -> None:
    state = TaskState({"s1": ()}, budgets={"s1": 2})
    state.book("s1")
    other = state.copy()
    other.book("s1")
    assert state.remaining("s1") == 1 and other.remaining("s1") == 0


# --- generator 6 without the knob is generator 5 ----------------------------------------------


@pytest.mark.parametrize(("steps", "density"), GRAPHS)
def test_version_6_without_the_knob_is_version_5_byte_for_byte(steps: int, density: float) -> None:
    for seed in SEEDS:
        v6 = _episode(seed, steps, density)
        v5 = _episode(seed, steps, density, generator=5)
        same = msgspec.structs.replace(v6, spec=v5.spec)
        assert msgspec.json.encode(same) == msgspec.json.encode(v5)
        assert cell_episode(v6, Knobs()) is v6
        assert b"budgets" not in msgspec.json.encode(v6)


def test_older_generators_never_place_a_budget() -> None:
    ep = _episode(100, generator=5)
    assert budgeted(ep, 2) is ep


# --- the placement ----------------------------------------------------------------------------


def _placed(ep: Episode) -> list[int]:
    return [i for i, t in enumerate(ep.turns) if t.kind == "budget_repeat"]


@pytest.mark.parametrize(("steps", "density"), GRAPHS)
def test_a_budget_stresses_only_its_turns(steps: int, density: float) -> None:
    """Cap N: N fillers after the step's perfect-play run become its repeat requests, the
    first N - 1 eligible and the last spent; every other turn, its perfect-play label, the
    episode's length and its planned asks are the control's."""
    placed_somewhere = 0
    for seed in SEEDS:
        control = _episode(seed, steps, density)
        base = [p.verdict for p in perfect_play(control)]
        for cap in CAPS:
            ep = budgeted(control, cap)
            if not ep.caps:
                assert not candidates(control) and ep is control
                continue
            placed_somewhere += 1
            (step,) = ep.caps
            slots = _placed(ep)
            assert len(slots) == cap and len(ep.turns) == len(control.turns)
            assert all(control.turns[j].kind == "filler" for j in slots)
            play = [p.verdict for p in perfect_play(ep)]
            labels = [v.label for j in slots if (v := play[j]) is not None]
            assert labels == ["eligible"] * (cap - 1) + ["spent"]
            off = [i for i in range(len(ep.turns)) if i not in slots]
            assert [ep.turns[i] for i in off] == [control.turns[i] for i in off]
            assert [play[i] for i in off] == [base[i] for i in off]
            assert all(ep.turns[j].step == step for j in slots)
            assert ep.brief == control.brief + render_budgets({step: cap})
    assert placed_somewhere >= len(SEEDS) * len(CAPS) * 0.8


def test_smaller_caps_stress_a_subset_of_the_turns_of_larger_ones() -> None:
    for seed in SEEDS:
        control = _episode(seed, 15)
        placed = [set(_placed(budgeted(control, cap))) for cap in CAPS]
        assert all(a <= b for a, b in itertools.pairwise(placed))
        assert len({tuple(budgeted(control, cap).caps) for cap in CAPS}) == 1


def test_the_placed_work_orders_are_fresh() -> None:
    for seed in SEEDS:
        ep = budgeted(_episode(seed, 15), MAX_BUDGET)
        orders = [t.work_order for t in ep.turns if t.work_order]
        assert len(orders) == len(set(orders))


def test_the_placement_depends_on_the_seed_alone() -> None:
    control = _episode(101, 15)
    assert budgeted(control, 3) == budgeted(_episode(101, 15), 3)


# --- the readings of the rule -----------------------------------------------------------------


def test_the_brief_says_the_rule_and_an_agent_reads_it_back() -> None:
    """The hidden reading: the budgets the brief states are the episode's."""
    for seed in SEEDS:
        ep = budgeted(_episode(seed, 15), 2)
        parsed = parse_brief(ep.brief)
        assert parsed.budgets == ep.caps
        assert len(parsed.steps) == 15
        if ep.caps:
            assert BUDGET_CLAUSE in ep.brief.splitlines()
    assert parse_brief(_episode(100).brief).budgets == {}


def test_the_compile_reads_budgets_beside_the_papers_fields() -> None:
    graph = parse_graph(
        '{"steps": {"s1": {"deps": [], "code": "RC-1234"}, "s2": {"deps": ["s1"], '
        '"code": "RC-2345"}}, "budgets": {"S2": 3, "s1": true, "s9": "x"}}'
    )
    assert graph.caps == {"s2": 3}
    revision = parse_compiled_revision('{"cancel": null, "rewires": {}, "relax": null}')
    assert validate(graph, revision).passed
    plain = parse_graph('{"steps": {"s1": {"deps": [], "code": "RC-1234"}}}')
    assert plain.caps == {} and b"budgets" not in msgspec.json.encode(plain)


@pytest.mark.parametrize("budgets", ['{"s7": 2}', '{"s1": 0}'])
def test_the_validator_flags_a_budget_the_graph_cannot_hold(budgets: str) -> None:
    steps = '{"s1": {"deps": [], "code": "RC-4321"}}'  # not the prompt's example
    graph = parse_graph(f'{{"steps": {steps}, "budgets": {budgets}}}')
    revision = parse_compiled_revision('{"cancel": null, "rewires": {}, "relax": null}')
    assert "budget" in validate(graph, revision).flags


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_the_budget_reading_never_raises(text: str) -> None:
    graph = parse_graph('{"steps": {"s1": {"code": "RC-4321"}}, "budgets": ' + text + "}")
    assert all(isinstance(c, int) for c in graph.caps.values())
    parse_brief(BUDGET_CLAUSE + "\n" + text)


def test_the_placement_count_in_the_docs_is_what_the_generator_gives() -> None:
    """docs/semantics.md prints the episodes without a budget candidate per graph."""
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "semantics.md").read_text()
    counts = [
        (s, d, sum(not candidates(_episode(seed, s, d)) for seed in range(100, 164)))
        for s, d in ((15, 0.3), (10, 0.3), (10, 0.15), (5, 0.15))
    ]
    assert f"# prints {counts}" in docs


def test_placing_a_rule_twice_places_it_once() -> None:
    """A caller may pass a cell's episode to cell_episode again (the viewer scores the
    episode it shows): the rules are placed once."""
    for knobs in (Knobs(budget=3), Knobs(expiry=6)):
        once = cell_episode(_episode(100, 15), knobs)
        assert once.caps or once.lapses
        assert cell_episode(once, knobs) is once
