"""A new stress knob is the three steps docs/extending.md lists ("A new knob"), and nothing
else: a toy knob (``whisper``, an aside in the user's message) added here through exactly
those steps is read by every reader of the knob registry (the grid's checks, the variant
contrasts, the generator rule), and leaves every existing cell as it was."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from protocol import EpisodeSpec, generate
from protocol.arms.table import Variant
from protocol.config import Knobs
from protocol.knobs import KNOBS, KnobSpec, generator_problems, knob_problems, rate_check, variants
from protocol.records import Episode


# Step 1: the field, "off" by default (here on a subclass: the repo's is a field of Knobs).
class ToyKnobs(Knobs, frozen=True, kw_only=True):
    whisper: float = 0.0


# Step 2: the knob's module: what it does to an episode (a dose placed from the seed, never
# from the agent's behaviour) and its KnobSpec.
def whispered_turns(episode: Episode, rate: float) -> tuple[int, ...]:
    """The ask turns that carry the aside: drawn from the episode's seed alone."""
    rng = random.Random(f"whisper:{episode.spec.seed}")
    return tuple(t.index for t in episode.turns if t.kind == "ask" and rng.random() < rate)


def _whisper_since(knobs: Knobs) -> tuple[int, str] | None:
    return (6, "whisper") if getattr(knobs, "whisper", 0.0) else None


WHISPER = KnobSpec(
    field="whisper",
    label="an aside whispered in the user's message (a toy)",
    check=rate_check("whisper", "whisper rate"),
    family="Stress: whisper (toy)",
    alone=True,
    since=_whisper_since,
)


# Step 3: one registration line (in the repo: in protocol/knobs.py).
@pytest.fixture
def whisper() -> Iterator[KnobSpec]:
    KNOBS.add(WHISPER.field, WHISPER)
    try:
        yield WHISPER
    finally:
        KNOBS.remove(WHISPER.field)


def test_existing_cells_are_unchanged(whisper: KnobSpec) -> None:
    assert ToyKnobs().changed() == {} == Knobs().changed()
    assert ToyKnobs(spoof="notice").changed() == Knobs(spoof="notice").changed()
    assert ToyKnobs(whisper=0.25).changed() == {"whisper": 0.25}


def test_every_registry_reader_sees_the_new_knob(whisper: KnobSpec) -> None:
    assert knob_problems(ToyKnobs(whisper=0.25), "raw") == []
    assert knob_problems(ToyKnobs(whisper=2.0), "raw") == [
        "whisper rate must be in [0, 1] (got 2.0)"
    ]
    assert Variant(knob="whisper", table="Stress: whisper (toy)", alone=True) in variants()
    assert generator_problems(ToyKnobs(whisper=0.25), 5) == [
        "whisper needs generator 6 or later (the grid uses 5)"
    ]
    assert generator_problems(ToyKnobs(), 5) == []


def test_the_dose_is_fixed_by_the_seed() -> None:
    episode = generate(EpisodeSpec(seed=101, steps=10, density=0.3))
    turns = whispered_turns(episode, 0.5)
    assert turns == whispered_turns(generate(EpisodeSpec(seed=101, steps=10, density=0.3)), 0.5)
    assert turns and set(turns) <= {t.index for t in episode.turns if t.kind == "ask"}


def test_without_its_registration_no_reader_sees_it() -> None:
    assert "whisper" not in KNOBS
    assert all(v.knob != "whisper" for v in variants())
    assert generator_problems(ToyKnobs(whisper=0.25), 5) == []
