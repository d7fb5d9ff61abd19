"""Replays shared between records (``episode_score.Replays``) give each record the score it
gets alone: a log played to its end (its turns the episode's own, keyed by identity, #50)
and a log cut short (its turns keyed by value), under several styles, terminations and
executed steps, in any order and with detail or without."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import EpisodeSpec, TurnRecord, generate
from protocol.config import Knobs
from protocol.records import Booking, CellKey, EpisodeRecord, scripted_fields
from scoring.replay.episode_score import Replays, score_episode

EPISODE = generate(EpisodeSpec(seed=5, steps=6, density=0.3))
FULL = len(EPISODE.turns)


def _record(n: int, booked: list[bool], style: str, termination: str) -> EpisodeRecord:
    turns = []
    for t, book in zip(EPISODE.turns[:n], booked, strict=False):
        reply = "Noted."
        admitted: tuple[Booking, ...] = ()
        if book and t.step is not None and t.work_order is not None:
            code = EPISODE.step(t.step).code
            reply = f"Done.\n\nref {code}/{t.work_order}"
            # as the world admitted it: no admitted difference, so the replay is shared
            admitted = (Booking(step=t.step, code=code, work_order=t.work_order),)
        turns.append(
            TurnRecord(**scripted_fields(t), sent_text=t.text, reply=reply, admitted=admitted)
        )
    return EpisodeRecord(
        cell=CellKey(model="m", steps=6, density=0.3, arm="raw", knobs=Knobs(user_style=style)),  # type: ignore[arg-type]
        spec=EPISODE.spec,
        turns=tuple(turns),
        termination=termination,  # type: ignore[arg-type]
    )


RECORDS = st.builds(
    _record,
    st.sampled_from([FULL, FULL, FULL - 1, 3, 0]),
    st.lists(st.booleans(), min_size=FULL, max_size=FULL),
    st.sampled_from(["cooperative", "restate", "double"]),
    st.sampled_from(["completed", "timeout"]),
)


@given(st.lists(RECORDS, min_size=1, max_size=8), st.booleans())
@settings(max_examples=200, deadline=None)
def test_shared_replays_score_each_record_as_alone(
    records: list[EpisodeRecord], detail: bool
) -> None:
    replays = Replays()
    for record in records:
        shared = score_episode(record, EPISODE, detail=detail, replays=replays)
        assert shared == score_episode(record, EPISODE, detail=detail)


def test_a_log_played_to_its_end_shares_one_replay() -> None:
    """Two arms' records of one episode with the same bookings: one replay, the same
    scoring object (the turns keyed by identity)."""
    record = _record(FULL, [True] * FULL, "cooperative", "completed")
    replays = Replays()
    first = score_episode(record, EPISODE, detail=False, replays=replays)
    again = score_episode(record, EPISODE, detail=False, replays=replays)
    assert again.primary is first.primary
    assert first == score_episode(record, EPISODE, detail=False)
