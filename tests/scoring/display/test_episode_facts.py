"""The viewer index's episode facts (scoring/display/episode_facts.py, #50): the row built from
them (``facts_row``, which ``episode_row`` is) counts helpers and tokens as ``cost_rows``'
one-episode row does, and a cell's cost is ``cell_cost``'s over those rows, exactly, whatever
the calls (roles, cached, shared), the termination and a handoff."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import EpisodeRecord
from protocol.records import CallRecord
from scoring.analyses.cost import cost_rows
from scoring.display.episode_facts import episode_facts, facts_cell_cost
from scoring.display.episode_views import arm_label, episode_row, facts_row
from scoring.display.models import HelperCalls, RowView, Tokens
from scoring.display.run_overview import cell_cost
from scoring.replay.episode_score import EpisodeScore, score_episode
from tests.scoring_records import build, cell, episode, perfect

_EP = episode(seed=3)

_CALL = st.builds(
    CallRecord,
    role=st.sampled_from(["agent", "agent", "matcher", "compiler", "memory", "embedding"]),
    prompt_tokens=st.integers(0, 5000),
    completion_tokens=st.integers(0, 900),
    cached=st.booleans(),
    shared=st.booleans(),
    server_s=st.floats(0, 5),
)


def _record(
    arm: str, calls: list[list[CallRecord]], termination: str, wall: float, handoff: bool
) -> EpisodeRecord:
    knobs = {"sessions": 2, "next_model": "scripted/other", "handoff": "note"} if handoff else {}
    rec = build(_EP, cell(arm, _EP.spec, **knobs), perfect(_EP), termination=termination)
    turns = []
    for i, t in enumerate(rec.turns):
        extra: dict[str, object] = {"calls": tuple(calls[i % len(calls)]) if calls else ()}
        if handoff and i == len(rec.turns) // 2:
            extra["session"] = 1
        turns.append(msgspec.structs.replace(t, **extra))
    return msgspec.structs.replace(rec, turns=tuple(turns), wall_s=wall)


def _cost_rows_row(rec: EpisodeRecord, score: EpisodeScore) -> RowView:
    """The oracle: the row from the record's walk and its ``cost_rows`` one-episode row (the
    way ``episode_row`` built it before the facts)."""
    rows = cost_rows([rec])
    cost = rows[0] if rows else None
    calls = [c for t in rec.turns for c in t.calls if not c.cached]
    agent = sum(c.prompt_tokens + c.completion_tokens for c in calls if c.role == "agent")
    helper = sum(c.prompt_tokens + c.completion_tokens for c in calls if c.role != "agent")
    counted = score.counted
    return RowView(
        slug=rec.cell.slug(),
        arm=arm_label(rec.cell),
        seed=rec.spec.seed,
        trial=rec.trial,
        termination=rec.termination,
        counted=counted,
        strict=score.primary.success if counted else None,
        decline_aware=score.decline_aware.success if counted else None,
        channels={ch: n for ch, n in score.primary.channels.items() if n},
        decline_aware_channels={ch: n for ch, n in score.decline_aware.channels.items() if n},
        turns=len(rec.turns),
        turns_ok=score.primary.turns_ok,
        tokens=Tokens(agent=agent, helper=helper if cost is None else round(cost.helper_tokens)),
        helpers=HelperCalls()
        if cost is None
        else HelperCalls(
            needed=round(cost.matcher_required + cost.compiler_required),
            made=round(cost.matcher_made + cost.compiler_made),
            cached=round(cost.matcher_cached + cost.compiler_cached),
        ),
        wall_s=rec.wall_s,
        corruptions=len(rec.corruptions),
        refused=score.refused,
        mismatches=len(score.mismatches),
    )


_RECORDS = st.lists(
    st.builds(
        _record,
        arm=st.sampled_from(["raw", "enforce"]),
        calls=st.lists(st.lists(_CALL, max_size=4), max_size=3),
        termination=st.sampled_from(["completed", "completed", "endpoint_error"]),
        wall=st.floats(0, 500),
        handoff=st.booleans(),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=60, deadline=None)
@given(_RECORDS)
def test_the_row_and_the_cell_cost_are_those_of_the_record(records: list[EpisodeRecord]) -> None:
    for rec in records:
        score = score_episode(rec, _EP)
        facts = episode_facts(rec)
        expected = _cost_rows_row(rec, score)
        assert facts_row(rec.cell.slug(), facts, score) == expected
        assert episode_row(rec, score) == expected
        assert (facts.cost is None) == (rec.termination != "completed")
    rows = [row for rec in records for row in cost_rows([rec])]
    kept = [(f.cost, f.wall_s) for f in map(episode_facts, records) if f.cost is not None]
    assert facts_cell_cost(kept) == cell_cost(rows)
