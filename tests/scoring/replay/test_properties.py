"""Property tests: perfect play always succeeds; one wrong action fails in exactly its channel."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import CHANNELS, Episode, EpisodeSpec, ScriptedUser, Turn, Verdict, generate
from scoring.replay.episode_score import score_episode
from tests.conftest import perfect_actions
from tests.scoring_records import Act, build, cell, perfect, ref_line

ARMS = ["raw", "checklist", "ledger", "directive", "enforce", "hybrid", "memory-topk", "mem0"]

specs = st.builds(
    EpisodeSpec,
    seed=st.integers(0, 10_000),
    steps=st.integers(5, 18),
    density=st.sampled_from([0.0, 0.15, 0.3, 0.6]),
    domain=st.sampled_from(["procurement", "release"]),
    brief=st.sampled_from(["amended", "original"]),
    ambiguous_rate=st.sampled_from([0.0, 0.0, 0.3]),
)


@given(specs, st.sampled_from(ARMS), st.booleans())
@settings(max_examples=30, deadline=None)
def test_perfect_play_is_strict_success_in_every_arm(
    spec: EpisodeSpec, arm: str, tools: bool
) -> None:
    ep = generate(spec)
    record = build(ep, cell(arm, spec, tools=tools), perfect(ep, tools=tools))
    s = score_episode(record, ep)
    assert s.primary.success and s.decline_aware.success
    assert s.primary.errors == 0 and s.mismatches == () and s.admitted_diffs == 0


def _perfect_turns(ep: Episode) -> list[tuple[Turn, Verdict | None]]:
    user = ScriptedUser(ep)
    out = []
    while (turn := user.next_turn()) is not None:
        verdict = user.begin(turn)
        user.finish(turn, verdict, perfect_actions(turn, verdict))
        out.append((turn, verdict))
    return out


# The wrong action for each label, and the channel it must land in.
FLIP = {
    "eligible": ("omit", "omission"),
    "redo": ("omit", "refused_redo"),
    "done": ("book", "re_execution"),
    "blocked": ("book", "premature"),
    "cancelled": ("book", "superseded"),
}


@given(specs, st.sampled_from(ARMS), st.integers(0, 10_000), st.booleans())
@settings(max_examples=40, deadline=None)
def test_one_wrong_action_fails_in_exactly_its_channel(
    spec: EpisodeSpec, arm: str, pick: int, extra: bool
) -> None:
    ep = generate(spec)
    requests = [(t, v) for t, v in _perfect_turns(ep) if t.work_order is not None]
    turn, verdict = requests[pick % len(requests)]
    label = verdict.label if verdict is not None else None
    if extra or label is None:
        # Book a step other than the requested one (ambiguous probes request none).
        other = next(s.id for s in ep.steps if s.id != turn.step)
        lines = [ref_line(ep, other, turn.work_order)]
        if turn.step is not None and label in ("eligible", "redo"):
            lines.append(ref_line(ep, turn.step, turn.work_order))
        act, channel = Act("\n".join(lines)), "unrequested"
    else:
        how, channel = FLIP[label]
        assert turn.step is not None
        act = Act(ref_line(ep, turn.step, turn.work_order) if how == "book" else "Noted.")
    record = build(ep, cell(arm, spec), perfect(ep, {turn.index: act}))
    s = score_episode(record, ep)
    expected = {c: int(c == channel) for c in CHANNELS}
    assert not s.primary.success and not s.decline_aware.success
    assert s.primary.channels == expected
    assert s.decline_aware.channels == expected
    flipped = next(t for t in s.primary.turns if t.index == turn.index)
    assert [e.channel for e in flipped.errors] == [channel]
