"""The task-state machine of Section 3.1: unit and property tests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import EpisodeSpec, TaskState, Verdict, generate, judge_turn
from protocol.state.machine import Error, sort_ids
from tests.conftest import play_perfect


@st.composite
def dags(draw: st.DrawFn) -> dict[str, frozenset[str]]:
    n = draw(st.integers(2, 12))
    ids = [f"s{i}" for i in range(1, n + 1)]
    order = draw(st.permutations(ids))
    deps: dict[str, frozenset[str]] = {}
    for i, v in enumerate(order):
        earlier = order[:i]
        deps[v] = frozenset(draw(st.sets(st.sampled_from(earlier))) if earlier else set())
    return deps


ops = st.lists(
    st.tuples(st.sampled_from(["book", "cancel", "authorize"]), st.integers(0, 11)), max_size=30
)


@given(dags(), ops)
def test_status_is_derived(deps: dict[str, frozenset[str]], actions: list[tuple[str, int]]) -> None:
    state = TaskState(deps)
    ids = state.steps
    for op, i in actions:
        v = ids[i % len(ids)]
        if op == "book":
            state.book(v)
        elif op == "cancel":
            state.cancel(v)
        else:
            state.begin_turn(v)
        for u in ids:
            expected = (
                "cancelled"
                if u in state.cancelled
                else "done"
                if u in state.done
                else "blocked"
                if any(p not in state.done for p in deps[u])
                else "todo"
            )
            assert state.status(u) == expected
            assert (state.status(u) == "cancelled") <= (u not in state.eligible())
            verdict = state.verdict(u)
            assert (verdict.label == "eligible") == (expected == "todo")
            assert (verdict.label == "redo") == (expected == "done" and u in state.authorized)


@given(dags(), st.data())
def test_cancel_rewire_relax_keep_the_graph_acyclic(
    deps: dict[str, frozenset[str]], data: st.DataObject
) -> None:
    state = TaskState(deps)
    ids = state.steps
    c = data.draw(st.sampled_from(ids))
    rewires = {d: (deps[d] - {c}) | deps[c] for d in ids if c in deps[d]}
    edges = [(w, u) for w in ids for u in (rewires.get(w, deps[w])) if w != c]
    relax = data.draw(st.sampled_from(edges)) if edges else None
    state.apply_revision(c, rewires, relax)
    assert state.is_acyclic()
    assert state.status(c) == "cancelled" and c not in state.eligible()
    assert all(c not in state.deps[d] for d in rewires)


def test_a_cycle_is_detected() -> None:
    assert not TaskState({"s1": {"s2"}, "s2": {"s1"}}).is_acyclic()
    assert TaskState({"s1": set(), "s2": {"s1"}}).is_acyclic()


def test_sort_ids_is_natural() -> None:
    assert sort_ids(["s10", "s2", "s1"]) == ("s1", "s2", "s10")


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 10_000),
    st.integers(5, 18),
    st.sampled_from([0.0, 0.15, 0.3, 0.6, 1.0]),
    st.sampled_from(["procurement", "release"]),
    st.sampled_from([0.0, 0.15]),
)
def test_perfect_play_makes_no_error(
    seed: int, steps: int, rho: float, domain: str, amb: float
) -> None:
    spec = EpisodeSpec(seed=seed, steps=steps, density=rho, domain=domain, ambiguous_rate=amb)
    ep = generate(spec)
    assert len(ep.turns) == 44
    for turn, _verdict, _act, errors in play_perfect(ep):
        assert errors == [] and not turn.dynamic


E, B, D, C, R = (
    Verdict("eligible"),
    Verdict("blocked", ("s1",)),
    Verdict("done"),
    Verdict("cancelled"),
    Verdict("redo"),
)


@pytest.mark.parametrize(
    ("verdict", "executed", "channels"),
    [
        (E, ["s2"], []),
        (E, [], ["omission"]),
        (B, ["s2"], ["premature"]),
        (B, [], []),
        (D, ["s2"], ["re_execution"]),
        (D, [], []),
        (C, ["s2"], ["superseded"]),
        (C, [], []),
        (R, ["s2"], []),
        (R, [], ["refused_redo"]),
        (E, ["s3"], ["unrequested", "omission"]),
        (E, ["s2", "s3"], ["unrequested"]),
    ],
)
def test_each_channel(verdict: Verdict, executed: list[str], channels: list[str]) -> None:
    errors = judge_turn("s2", verdict, executed)
    assert sorted(e.channel for e in errors) == sorted(channels)


def test_turns_without_a_step() -> None:
    assert judge_turn(None, None, []) == []
    assert judge_turn(None, None, ["s4"]) == [Error("unrequested", "s4")]


def test_dynamic_re_ask_after_drift() -> None:
    """An omitted prerequisite makes a planned ask blocked; the deferred step is re-asked
    with a fresh work order once the prerequisite is done."""
    for seed in range(100, 140):
        ep = generate(EpisodeSpec(seed=seed, steps=10, density=0.3))
        from protocol import ScriptedUser

        user = ScriptedUser(ep)
        omitted: str | None = None
        saw_dynamic = False
        while (turn := user.next_turn()) is not None:
            verdict = user.begin(turn)
            act: list[str] = []
            if turn.step and verdict and verdict.label in ("eligible", "redo"):
                dependents = [s for s in ep.steps if turn.step in s.deps]
                if omitted is None and turn.kind == "ask" and dependents:
                    omitted = turn.step  # omit it once
                else:
                    act = [turn.step]
            if turn.dynamic:
                saw_dynamic = True
                assert turn.kind == "re_ask" and verdict is not None
                assert verdict.label == "eligible" and turn.work_order
            user.finish(turn, verdict, act)
        if saw_dynamic:
            wos = [t.work_order for t in ep.turns if t.work_order]
            assert len(wos) == len(set(wos))
            return
    pytest.fail("no episode produced a dynamic re-ask")
