"""The data ``ladder show`` and ``ladder view`` are drawn from (scoring/display/episode_views.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import EpisodeRecord, TurnRecord
from protocol.records import (
    AccuracyRecord,
    CallRecord,
    CompiledRevisionRecord,
    CompiledStepRecord,
    CompileRecord,
    CorruptionEvent,
    ValidatorRecord,
)
from scoring.analyses.cost import CostRow, cost_rows
from scoring.display.episode_views import (
    arm_label,
    compare_view,
    compile_view,
    episode_row,
    episode_view,
    filter_rows,
)
from scoring.display.models import EpisodeView, ErrorView, RowView, Tokens, TurnView
from scoring.display.run_overview import cell_cost, cells_view, contrasts_view
from scoring.display.turns import sent_parts
from scoring.replay.episode_score import score_episode
from scoring.results.families import score_lines
from tests.scoring_records import Act, build, cell, episode, perfect, ref_line


def _probe_failure(seed: int = 0) -> tuple[Any, EpisodeRecord, int]:
    """A raw episode whose agent re-executes the step of its first redo probe."""
    ep = episode(seed=seed)
    probe = next(t for t in ep.turns if t.kind == "redo_probe")
    assert probe.step is not None
    wrong = {probe.index: Act(f"Doing it again.\n{ref_line(ep, probe.step, probe.work_order)}")}
    return ep, build(ep, cell("raw", ep.spec), perfect(ep, wrong)), probe.index


def test_a_re_executed_probe_is_the_one_failing_turn() -> None:
    ep, rec, probe = _probe_failure()
    score = score_episode(rec, ep)
    view = episode_view(rec, score, ep)
    row = view.row
    assert row.strict is False and row.decline_aware is False
    assert row.channels == {"re_execution": 1}
    assert row.turns == len(rec.turns) and row.turns_ok == len(rec.turns) - 1
    failing = [t for t in view.turns if t.failed]
    assert [t.index for t in failing] == [probe]
    (t,) = failing
    step = ep.turns[probe].step
    assert step is not None
    assert t.label == "done" and t.executed == [step]
    # the re-execution names the turn that executed the step before
    first = next(x.index for x in view.turns if step in x.executed)
    assert first < probe
    assert t.errors == [ErrorView(channel="re_execution", step=step, original_turn=first)]
    assert t.reply.startswith("Doing it again.")
    assert [(b.step, b.code, b.work_order) for b in t.admitted] == [
        (step, ep.step(step).code, ep.turns[probe].work_order)
    ]
    assert view.compile is None and view.corruptions == []
    # the page's JSON keeps the names app.js reads
    page = msgspec.json.decode(msgspec.json.encode(view))
    turn = page["turns"][probe]
    assert turn["errors"] == [{"channel": "re_execution", "step": step, "original_turn": first}]
    assert {"sent", "admitted", "refused", "calls", "label", "decline_aware_errors"} <= set(turn)
    assert page["row"]["tokens"] == {"agent": row.tokens.agent, "helper": row.tokens.helper}


def test_a_perfect_episode_has_no_failing_turn() -> None:
    ep = episode(seed=1)
    rec = build(ep, cell("enforce", ep.spec), perfect(ep))
    view = episode_view(rec, score_episode(rec, ep), ep)
    assert view.row.strict is True and view.row.channels == {}
    assert not any(t.failed or t.failed_decline_aware for t in view.turns)
    labels = {t.label for t in view.turns}
    assert {"eligible", "blocked", "done", "cancelled", "none"} <= labels


def test_an_infrastructure_error_is_not_counted() -> None:
    ep = episode(seed=2)
    rec = build(ep, cell("raw", ep.spec), perfect(ep), termination="endpoint_error", stop_after=5)
    row = episode_row(rec, score_episode(rec, ep))
    assert row.counted is False and row.strict is None and row.decline_aware is None
    assert row.termination == "endpoint_error"


def test_sent_text_is_cut_into_the_user_words_and_the_arms_additions() -> None:
    t = TurnRecord(
        index=3,
        kind="ask",
        step="s1",
        work_order="#W1",
        user_text="Please do s1 (#W1).",
        arm_text="[CHECKLIST]\n- s1: TODO",
        sent_text="[NOTICE] refused s2\n\nPlease do s1 (#W1).\n\n[CHECKLIST]\n- s1: TODO",
    )
    assert sent_parts(t) == [
        ("arm", "[NOTICE] refused s2\n\n"),
        ("user", "Please do s1 (#W1)."),
        ("arm", "\n\n[CHECKLIST]\n- s1: TODO"),
    ]
    old = msgspec.structs.replace(t, sent_text="", arm_text="")  # a log from before sent_text
    assert sent_parts(old) == [("user", "Please do s1 (#W1).")]
    raw = msgspec.structs.replace(t, sent_text=t.user_text, arm_text="")
    assert sent_parts(raw) == [("user", "Please do s1 (#W1).")]


def test_compile_view_marks_each_difference_from_the_generator() -> None:
    ep = episode(seed=3)
    first, second = ep.steps[0], ep.steps[1]
    graph = [CompiledStepRecord(id=s.id, deps=s.deps, code=s.code) for s in ep.steps]
    graph[0] = CompiledStepRecord(id=first.id, deps=(*first.deps, "s99"), code=first.code)
    graph[1] = CompiledStepRecord(id=second.id, deps=second.deps, code="RC-0000")
    rev = ep.revision
    compiled = CompileRecord(
        model="scripted/golden",
        graph=tuple(graph),
        revision=CompiledRevisionRecord(cancel=rev.cancel),
        validator=ValidatorRecord(passed=False, flags=("unknown_dep",), unknown_dep=("s99",)),
        accuracy=AccuracyRecord(
            exact=False, steps=6, dep=5, code=5, cancel=True, rewire=False, relax=False
        ),
    )
    rec = msgspec.structs.replace(
        build(ep, cell("enforce", ep.spec), perfect(ep)), compile=compiled
    )
    view = compile_view(rec, ep)
    assert view is not None
    by_step = {s.step: s for s in view.steps}
    assert [s.step for s in view.steps] == [s.id for s in ep.steps]
    assert by_step[first.id].deps_differ and not by_step[first.id].code_differs
    assert by_step[second.id].code_differs and not by_step[second.id].deps_differ
    assert by_step[second.id].compiled_code == "RC-0000"
    others = [s for s in view.steps if s.step not in (first.id, second.id)]
    assert not any(s.deps_differ or s.code_differs for s in others)
    assert view.generator_revision is not None and view.generator_revision.cancel == rev.cancel
    assert view.revision.cancel == rev.cancel and view.revision.rewires == {}
    assert view.validator.passed is False and view.validator.flags == ("unknown_dep",)
    page = msgspec.json.decode(msgspec.json.encode(view))
    assert page["validator"]["flags"] == ["unknown_dep"] and page["revision"]["rewires"] == {}
    assert compile_view(build(ep, cell("raw", ep.spec), perfect(ep)), ep) is None


def test_corruption_events_land_on_their_turns() -> None:
    ep = episode(seed=4)
    events = (
        CorruptionEvent(turn=5, step="s2", kind="lost_done"),
        CorruptionEvent(turn=9, step="s1", kind="drop_edge", edge="s3"),
    )
    rec = msgspec.structs.replace(
        build(ep, cell("enforce", ep.spec, corruption=0.01), perfect(ep)), corruptions=events
    )
    view = episode_view(rec, score_episode(rec, ep), ep)
    assert view.corruptions == list(events)
    page = msgspec.json.decode(msgspec.json.encode(view))
    assert page["corruptions"][1] == {"turn": 9, "step": "s1", "kind": "drop_edge", "edge": "s3"}
    on = {t.index: t.corruptions for t in view.turns if t.corruptions}
    assert on == {5: [events[0]], 9: [events[1]]}
    assert view.row.corruptions == 2
    assert view.row.arm == arm_label(rec.cell) == "enforce (corruption=0.01)"


def test_side_by_side_marks_the_turns_whose_outcome_differs() -> None:
    ep, raw, probe = _probe_failure(seed=5)
    good = build(ep, cell("enforce", ep.spec), perfect(ep))
    a = episode_view(raw, score_episode(raw, ep), ep)
    b = episode_view(good, score_episode(good, ep), ep)
    cmp = compare_view(a, b)
    assert cmp.seed == 5 and len(cmp.rows) == len(ep.turns)
    assert [r.a.index for r in cmp.rows if r.differs and r.a] == [probe]
    assert cmp.differing == 1 and cmp.a.arm == "raw" and cmp.b.arm == "enforce"
    assert compare_view(b, b).differing == 0


def _turn(
    index: int, dynamic: bool = False, errors: tuple[str, ...] = (), step: str = "s1"
) -> TurnView:
    errs = [ErrorView(channel=c, step="s1") for c in errors]
    return TurnView(
        index=index, kind="ask", step=step, work_order=None, dynamic=dynamic, named=[],
        label="eligible", decline_aware_label="eligible", executed=[], errors=errs,
        decline_aware_errors=errs, failed=bool(errs), failed_decline_aware=bool(errs),
        user_text="", arm_text="", sent=[], reply="", reasoning="", first_reply=None,
        admitted=[], refused=[], matched_step=None, matched_redo=None, matcher_outcome=None,
        directive=None, calls=[], corruptions=[],
    )  # fmt: skip


def _episode(seed: int, turns: list[TurnView]) -> EpisodeView:
    ep = episode(seed=seed)
    rec = build(ep, cell("raw", ep.spec), perfect(ep))
    view = episode_view(rec, score_episode(rec, ep), ep)
    return msgspec.structs.replace(view, turns=turns)


def test_side_by_side_pairs_planned_turns_across_a_dynamic_re_ask() -> None:
    a = _episode(7, [_turn(0), _turn(1, errors=("premature",)), _turn(2, True), _turn(3)])
    b = _episode(7, [_turn(0), _turn(1), _turn(2)])
    cmp = compare_view(a, b)
    pairs = [(r.a and r.a.index, r.b and r.b.index, r.differs) for r in cmp.rows]
    # planned turn 3 of a (after a's re-ask) pairs with planned turn 2 of b
    assert pairs == [(0, 0, False), (1, 1, True), (2, None, True), (3, 2, False)]


def test_filters_keep_failed_channel_and_seed() -> None:
    def row(seed: int, strict: bool | None, aware: bool | None, **channels: int) -> RowView:
        return RowView(
            slug="c", arm="raw", seed=seed, termination="completed", counted=strict is not None,
            strict=strict, decline_aware=aware, channels=channels, decline_aware_channels={},
            turns=1, turns_ok=1, tokens=Tokens(agent=0, helper=0), wall_s=0.0, corruptions=0,
            refused=0, mismatches=0,
        )  # fmt: skip

    rows = [
        row(1, True, True),
        row(2, False, True, re_execution=1),
        row(3, False, False, premature=2),
        row(4, None, None),  # infrastructure
    ]

    def seeds(kept: Iterable[RowView]) -> list[int]:
        return [r.seed for r in kept]

    assert seeds(filter_rows(rows, failed="strict")) == [2, 3, 4]
    assert seeds(filter_rows(rows, failed="decline_aware")) == [3, 4]
    assert seeds(filter_rows(rows, channel="premature")) == [3]
    assert seeds(filter_rows(rows, seed=2)) == [2]
    assert seeds(filter_rows(rows, failed="strict", channel="re_execution")) == [2]


def _with_calls(rec: EpisodeRecord, prompt: int, matcher: bool) -> EpisodeRecord:
    turns = []
    for i, t in enumerate(rec.turns):
        calls = [
            CallRecord(
                role="agent", prompt_tokens=prompt + i, completion_tokens=7, server_s=0.01 * (i % 3)
            )
        ]
        if matcher:
            calls.append(
                CallRecord(role="matcher", prompt_tokens=50, completion_tokens=5, cached=i % 2 == 0)
            )
        turns.append(msgspec.structs.replace(t, calls=tuple(calls)))
    return msgspec.structs.replace(rec, turns=tuple(turns), wall_s=1.5)


@pytest.mark.parametrize("arm", ["raw", "directive"])
def test_cell_cost_from_episode_rows_equals_cost_rows_over_the_cell(arm: str) -> None:
    recs = []
    for seed, prompt in ((10, 100), (11, 340), (12, 95)):
        ep = episode(seed=seed)
        recs.append(_with_calls(build(ep, cell(arm, ep.spec), perfect(ep)), prompt, arm != "raw"))
    (whole,) = cost_rows(recs)
    per_episode = [cost_rows([r])[0] for r in recs]
    got = cell_cost(per_episode)
    assert got.n == whole.n == 3
    assert got.prompt_tokens == pytest.approx(whole.prompt_tokens)
    assert got.completion_tokens == pytest.approx(whole.completion_tokens)
    assert got.total_tokens == pytest.approx(whole.total_tokens)
    assert got.helper_tokens == pytest.approx(whole.helper_tokens)
    assert got.agent_calls == pytest.approx(whole.agent_calls)
    required = whole.matcher_required + whole.compiler_required
    assert got.helper_calls == pytest.approx(required)
    assert got.helper_calls_cached == pytest.approx(whole.matcher_cached + whole.compiler_cached)
    assert got.episode_latency_median_s == pytest.approx(whole.wall_s.p50)
    # each episode's header: helper calls and tokens as the cost module counts them
    for rec, one in zip(recs, per_episode, strict=True):
        row = episode_row(rec, score_episode(rec))
        assert row.helpers.needed == round(one.matcher_required + one.compiler_required)
        assert row.helpers.cached == round(one.matcher_cached + one.compiler_cached)
        assert row.tokens.helper == round(one.helper_tokens)


def test_cells_view_carries_success_cis_channels_and_cost_relative_to_raw() -> None:
    recs, scores = [], []
    for seed in range(3):
        ep, raw, _ = _probe_failure(seed=seed)
        good = build(ep, cell("checklist", ep.spec), perfect(ep))
        for rec, prompt in ((raw, 100), (good, 250)):
            rec = _with_calls(rec, prompt, False)
            recs.append(rec)
            scores.append(score_episode(rec, ep))
    lines = score_lines(scores)
    costs: dict[str, list[CostRow]] = {}
    for r in recs:
        costs.setdefault(r.cell.slug(), []).append(cost_rows([r])[0])
    view = {c.line.cell.arm: c for c in cells_view(lines, costs)}
    assert view["raw"].line.strict_successes == 0 and view["checklist"].line.strict_successes == 3
    assert view["raw"].line.channels["re_execution"] == 3
    lo, hi = view["checklist"].line.strict_ci
    assert 0 < lo < hi == pytest.approx(1.0)
    assert view["raw"].cost.x_raw == pytest.approx(1.0)
    raw_total, checklist_total = view["raw"].cost.total_tokens, view["checklist"].cost.total_tokens
    assert raw_total and checklist_total
    ratio = checklist_total / raw_total
    assert view["checklist"].cost.x_raw == pytest.approx(ratio) and ratio > 1
    assert view["raw"].config.startswith("scripted/golden no-think S=6")
    # the contrasts, each with its configuration's label
    contrasts = contrasts_view(lines)
    assert contrasts and all(c.config == view["raw"].config for c in contrasts)
    assert {(c.line.a, c.line.b) for c in contrasts} == {("raw", "checklist")}


_BASE = _episode(1, [])


@given(
    planned=st.integers(min_value=0, max_value=12),
    extra_a=st.lists(st.integers(min_value=0, max_value=3), min_size=13, max_size=13),
    extra_b=st.lists(st.integers(min_value=0, max_value=3), min_size=13, max_size=13),
)
def test_side_by_side_pairs_every_planned_turn_with_its_twin(
    planned: int, extra_a: list[int], extra_b: list[int]
) -> None:
    """Whatever re-asks each arm inserted, the k-th planned turn of one arm pairs with the
    k-th of the other, and every turn appears exactly once."""

    def turns(extra: list[int]) -> list[TurnView]:
        out: list[TurnView] = []
        for k in range(planned):  # the planned turn's place is carried in its step
            out.append(_turn(len(out), step=f"p{k}"))
            for _ in range(extra[k]):
                out.append(_turn(len(out), True, step=f"p{k}"))
        return out

    a, b = turns(extra_a), turns(extra_b)
    cmp = compare_view(
        msgspec.structs.replace(_BASE, turns=a), msgspec.structs.replace(_BASE, turns=b)
    )
    rows = cmp.rows
    assert [r.a.index for r in rows if r.a] == [t.index for t in a]
    assert [r.b.index for r in rows if r.b] == [t.index for t in b]
    for r in rows:
        if r.a and r.b:
            assert r.a.step == r.b.step
            assert r.a.dynamic == r.b.dynamic
        assert r.differs == (r.a is None or r.b is None)
    assert len(rows) == planned + sum(
        max(x, y) for x, y in zip(extra_a[:planned], extra_b[:planned], strict=True)
    )


@given(
    before=st.text(max_size=20),
    user=st.text(min_size=1, max_size=30),
    after=st.text(max_size=20),
)
def test_sent_parts_put_the_message_back_together(before: str, user: str, after: str) -> None:
    t = TurnRecord(
        index=0,
        kind="ask",
        step="s1",
        work_order="#W1",
        user_text=user,
        arm_text=before + after,
        sent_text=before + user + after,
    )
    parts = sent_parts(t)
    assert "".join(text for _, text in parts) == t.sent_text
    assert ("user", user) in parts
    assert all(text for _, text in parts)


def test_the_same_turn_retry_shows_its_notices_in_the_view_and_in_show() -> None:
    from ladder.show import render_episode

    ep, rec, _ = _probe_failure()
    i = 3
    notice = "REJECTED: s2 is not eligible yet (OURS test notice)"
    turns = list(rec.turns)
    turns[i] = msgspec.structs.replace(
        turns[i], first_reply="the refused first reply", retry_notices=(notice,)
    )
    rec = msgspec.structs.replace(rec, turns=turns)
    view = episode_view(rec, score_episode(rec, ep), ep)
    by_index = {t.index: t for t in view.turns}
    assert by_index[turns[i].index].retry_notices == [notice]
    assert all(t.retry_notices == [] for k, t in by_index.items() if k != turns[i].index)
    page = msgspec.json.decode(msgspec.json.encode(view))
    assert [t["retry_notices"] for t in page["turns"] if t["retry_notices"]] == [[notice]]
    text = "\n".join(line.plain for line in render_episode(view))
    assert "notice shown on the retry" in text and notice in text
    assert text.index("the refused first reply") < text.index(notice)
