"""The sessions knob's placement (issue #48, generator 6): boundaries from the seed alone, the
episode otherwise its control's, nested doses, and the encoding of an unsessioned episode."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import EpisodeSpec, generate
from protocol.config import Knobs
from protocol.records import Episode
from protocol.stress.budget import cell_episode
from protocol.stress.sessions import (
    MAX_SESSIONS,
    MIN_SESSIONS,
    boundaries,
    session_of,
    sessioned,
)

GRAPHS = st.sampled_from(((10, 0.3), (15, 0.3), (5, 0.15), (15, 0.6)))


def _episode(seed: int, steps: int = 10, density: float = 0.3, generator: int = 6) -> Episode:
    return generate(EpisodeSpec(seed=seed, steps=steps, density=density, generator=generator))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    graph=GRAPHS,
    k=st.integers(MIN_SESSIONS, MAX_SESSIONS),
)
def test_boundaries_split_the_planned_turns_and_change_nothing_else(
    seed: int, graph: tuple[int, float], k: int
) -> None:
    control = _episode(seed, *graph)
    ep = sessioned(control, k)
    cuts = ep.boundaries
    n = len(control.turns)
    assert len(cuts) == k - 1 and list(cuts) == sorted(set(cuts))
    assert all(1 <= b < n for b in cuts)
    # a boundary is not a turn: turns, brief and every other field are the control's
    assert msgspec.structs.replace(ep, sessions=msgspec.UNSET) == control
    assert [session_of(ep, i) for i in range(n)] == sorted(session_of(ep, i) for i in range(n))
    assert session_of(ep, n - 1) == k - 1 and session_of(ep, 0) == 0


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), graph=GRAPHS, k=st.integers(MIN_SESSIONS, MAX_SESSIONS - 1))
def test_a_smaller_dose_is_a_subset_of_a_larger_one(
    seed: int, graph: tuple[int, float], k: int
) -> None:
    ep = _episode(seed, *graph)
    assert set(boundaries(ep, k)) < set(boundaries(ep, k + 1))


def test_placement_is_a_function_of_the_seed_and_idempotent() -> None:
    a, b = _episode(101), _episode(101)
    assert sessioned(a, 3) == sessioned(b, 3)
    assert sessioned(sessioned(a, 3), 5) == sessioned(a, 3)
    assert sessioned(a, 3).boundaries != sessioned(_episode(102), 3).boundaries


def test_off_an_older_generator_or_below_two_sessions_the_episode_is_unchanged() -> None:
    ep = _episode(100)
    for k in (0, 1):
        assert sessioned(ep, k) is ep
    old = _episode(100, generator=5)
    assert sessioned(old, 3) is old


def test_an_unsessioned_episode_encodes_as_before() -> None:
    """With sessions unset nothing new is encoded: a v6 episode's bytes (and so every pinned
    digest) are unchanged; with them set, only the boundaries are added."""
    ep = _episode(100)
    assert cell_episode(ep, Knobs()) is ep
    plain = msgspec.json.encode(ep)
    assert b'"sessions"' not in plain
    placed = msgspec.json.encode(cell_episode(ep, Knobs(sessions=3, handoff="note")))
    cuts = sessioned(ep, 3).boundaries
    assert placed == plain[:-1] + b',"sessions":' + msgspec.json.encode(list(cuts)) + b"}"
