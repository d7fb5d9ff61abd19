"""The scripted agents' handoff note (the sessions knob, issue #48): the perfect agent's note
lists what it performed, a new transcript that opens with the note reads it back, and the
synthetic agent's note drops lines at ``note_drop`` by its dice."""

from __future__ import annotations

from protocol import EpisodeSpec, generate
from protocol.records import Episode
from protocol.rule_strings import HANDOFF_CARRIED, HANDOFF_REQUEST
from serve.agents import answer
from serve.agents.handoff import NOTE_EMPTY, is_note_request
from serve.agents.reading import Message, build_view


def _session(ep: Episode, turns: int) -> tuple[list[Message], set[str]]:
    """The perfect agent's transcript over the first ``turns`` planned turns, and the steps
    it performed."""
    msgs: list[Message] = [("system", ep.brief)]
    for t in ep.turns[:turns]:
        msgs.append(("user", t.text))
        msgs.append(("assistant", answer("perfect", {}, msgs, digest="d").content))
    done = set(build_view([*msgs, ("user", "")]).state.done)
    return msgs, done


def _carried(ep: Episode, note: str) -> set[str]:
    """What a new transcript opened by ``note`` knows is done."""
    first = HANDOFF_CARRIED.format(note=note) + "\n\n" + ep.turns[20].text
    return set(build_view([("system", ep.brief), ("user", first)]).state.done)


def test_the_perfect_note_carries_every_performed_step() -> None:
    ep = generate(EpisodeSpec(seed=100, steps=10, density=0.3, generator=6))
    msgs, done = _session(ep, 20)
    assert done  # the session performed something
    assert is_note_request(HANDOFF_REQUEST)
    note = answer("perfect", {}, [*msgs, ("user", HANDOFF_REQUEST)], digest="d").content
    assert _carried(ep, note) == done
    assert _carried(ep, "") == set()  # nothing carried: nothing known


def test_the_synthetic_note_drops_lines_by_its_dice() -> None:
    ep = generate(EpisodeSpec(seed=101, steps=10, density=0.3, generator=6))
    msgs, done = _session(ep, 20)
    ask = [*msgs, ("user", HANDOFF_REQUEST)]
    perfect = answer("perfect", {}, ask, digest="d").content
    full = answer("synthetic", {"note_drop": 0.0}, ask, digest="d", draw="k").content
    none = answer("synthetic", {"note_drop": 1.0}, ask, digest="d", draw="k").content
    assert full == perfect and none == NOTE_EMPTY
    half = answer("synthetic", {"note_drop": 0.5}, ask, digest="d", draw="k").content
    assert half == answer("synthetic", {"note_drop": 0.5}, ask, digest="d", draw="k").content
    assert _carried(ep, half) <= done
    assert answer("always-book", {}, ask, digest="d").content == NOTE_EMPTY
