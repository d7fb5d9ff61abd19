"""The tables declared as Folds (#50, tenth round) whose ``whole`` looks a cell up once per
run of its values (askback, the semantics rules, sessions) make the parts a lookup per
value makes, for values in any order: a cell seen again after another joins its first part,
and the parts come in first-seen order. The reference below is the loop these tables ran
per episode before (41f1694)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.config import Knobs
from protocol.records import CellKey
from scoring.analyses.askback import ASKBACK, AskBackPart
from scoring.analyses.base import Analysis, Fold
from scoring.analyses.doses import DOSE_RESPONSE, INTERACTION
from scoring.analyses.pressure import PRESSURE
from scoring.analyses.pressure_episodes import PRESSURE_EPISODES
from scoring.analyses.semantics import BUDGET, EXCLUSIVE, EXPIRY, BudgetPart
from scoring.analyses.sessions import SESSIONS, SessionsPart
from scoring.analyses.stress import SPOOF, TOOL_FAILURE, USER_STYLE
from scoring.analyses.stress_turns import STRESS_TURNS, TURN_INTERACTION
from scoring.replay.askback import Burden

CELLS = [
    CellKey(model="m", steps=10, density=0.3, arm=arm, knobs=Knobs(budget=cap))
    for arm in ("raw", "enforce")
    for cap in (0, 2)
]
cells = st.sampled_from(CELLS)
seeds = st.integers(0, 5)
counts = st.tuples(st.integers(0, 3), st.integers(0, 3))


def test_every_table_of_this_round_is_a_fold_and_shared_ones_one_object() -> None:
    tables: list[Analysis[Any, Any]] = [
        SPOOF,
        TOOL_FAILURE,
        USER_STYLE,
        ASKBACK,
        BUDGET,
        EXPIRY,
        EXCLUSIVE,
        SESSIONS,
    ]
    tables += [DOSE_RESPONSE, INTERACTION, STRESS_TURNS, TURN_INTERACTION, PRESSURE]
    assert all(isinstance(t.compute, Fold) for t in [*tables, PRESSURE_EPISODES])
    assert DOSE_RESPONSE.compute is INTERACTION.compute
    assert STRESS_TURNS.compute is TURN_INTERACTION.compute is PRESSURE.compute
    assert PRESSURE_EPISODES.compute is PRESSURE.compute


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(cells, seeds, st.booleans(), st.none() | st.tuples(counts, counts))))
def test_the_rules_parts_in_any_order(values: list[Any]) -> None:
    acc: dict[CellKey, tuple[dict[int, bool], list[Any], list[Any]]] = {}
    for cell, seed, win, groups in values:
        success, first, second = acc.setdefault(cell, ({}, [], []))
        success[seed] = win
        if groups is not None:
            first.append(groups[0])
            second.append(groups[1])
    want = [BudgetPart(cell=c, success=s, within=w, beyond=b) for c, (s, w, b) in acc.items()]
    for rule in (BUDGET, EXPIRY, EXCLUSIVE):
        assert isinstance(rule.compute, Fold)
        assert rule.compute.whole(values) == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(cells, seeds, st.booleans(), st.none() | st.builds(Burden, questions=st.integers(0, 3), extra_s=st.floats(0, 2)))))  # fmt: skip
def test_the_askback_parts_in_any_order(values: list[Any]) -> None:
    wins: dict[CellKey, dict[int, bool]] = {}
    burdens: dict[CellKey, Burden | None] = {}
    for cell, seed, success, burden in values:
        wins.setdefault(cell, {})[seed] = success
        have = burdens.get(cell)
        burdens[cell] = burden if have is None else have if burden is None else have + burden
    want = [AskBackPart(cell=c, wins=w, burden=burdens[c]) for c, w in wins.items()]
    assert isinstance(ASKBACK.compute, Fold)
    assert ASKBACK.compute.whole(values) == want


turns = st.lists(st.tuples(st.integers(0, 9), st.booleans()), max_size=4)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(cells, seeds, st.booleans(), turns, st.integers(-1, 3))))
def test_the_sessions_parts_in_any_order(values: list[Any]) -> None:
    acc: dict[CellKey, SessionsPart] = {}
    for cell, seed, success, errors, restart in values:
        part = acc.setdefault(cell, SessionsPart(cell=cell, success={}, errors={}, restart={}))
        part.success[seed] = success
        part.errors[seed] = errors
        if restart >= 0:
            part.restart[seed] = restart
    assert isinstance(SESSIONS.compute, Fold)
    assert SESSIONS.compute.whole(values) == list(acc.values())
