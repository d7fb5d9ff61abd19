"""An uncooperative user, the user_style knob of the scripted user (issue #31; protocol.user,
docs/stress.md, the turn kinds in docs/protocol.md): each style's turns on the state machine,
the cooperative user unchanged, a run on the embedded endpoint, the report section, the Holm
family and the viewer's mark."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest

from protocol import EpisodeSpec, generate
from protocol.records import EpisodeRecord, Turn
from protocol.state.machine import Verdict
from protocol.user import STYLE_KINDS, ScriptedUser
from runner.grid.expand import parse_grid
from scoring.analyses.registry import analysis_sections, log_analyses
from scoring.analyses.stress import user_style_lines
from scoring.replay.episode_score import score_episode

SPEC = EpisodeSpec(seed=104, steps=10, density=0.3, generator=4)
EP = generate(SPEC)


def _play(user: ScriptedUser, act: Any) -> list[tuple[Turn, Verdict | None, list[Any]]]:
    """Serve the episode; ``act(turn, verdict) -> executed steps``; (turn, verdict, errors)."""
    out = []
    while (turn := user.next_turn()) is not None:
        verdict = user.begin(turn)
        errors = user.finish(turn, verdict, act(turn, verdict))
        out.append((turn, verdict, errors))
    return out


def _perfect(turn: Turn, verdict: Verdict | None) -> list[str]:
    if turn.kind == "double":
        return list(turn.named)
    ok = verdict is not None and verdict.label in ("eligible", "redo")
    return [turn.step] if ok and turn.step else []


def test_the_cooperative_user_serves_the_planned_schedule_unchanged() -> None:
    plain = _play(ScriptedUser(EP), _perfect)
    assert [t for t, _, _ in plain] == [
        t for t, _, _ in _play(ScriptedUser(EP, "cooperative"), _perfect)
    ]
    assert [t.text for t, _, _ in plain] == [t.text for t in EP.turns]
    assert not any(e for _, _, e in plain)


def test_restate_follows_each_refused_order_with_a_fresh_work_order() -> None:
    played = _play(ScriptedUser(EP, "restate"), _perfect)
    used = [t.work_order for t in EP.turns if t.work_order]
    restates = 0
    for i, (turn, verdict, errors) in enumerate(played):
        assert not errors
        refused = verdict is not None and verdict.label in ("done", "cancelled", "blocked")
        if turn.kind != "restate" and turn.work_order and refused:
            nxt, v2, _ = played[i + 1]
            assert (nxt.kind, nxt.step, nxt.dynamic) == ("restate", turn.step, True)
            assert nxt.work_order is not None
            assert nxt.work_order not in used and nxt.work_order in nxt.text
            assert v2 == verdict  # restating is no authorization: the same verdict
            restates += 1
        if turn.kind == "restate":
            assert played[i + 1][0].kind != "restate"  # a restate is not restated
    assert restates > 3


def test_a_restated_done_step_booked_is_a_re_execution() -> None:
    def books_restates(turn: Turn, verdict: Verdict | None) -> list[str]:
        return [turn.step] if turn.kind == "restate" and turn.step else _perfect(turn, verdict)

    played = _play(ScriptedUser(EP, "restate"), books_restates)
    channels = {
        verdict.label: {e.channel for e in errors}
        for turn, verdict, errors in played
        if turn.kind == "restate" and verdict is not None
    }
    assert channels["done"] == {"re_execution"}
    assert channels.get("cancelled", {"superseded"}) == {"superseded"}
    assert channels.get("blocked", {"premature"}) == {"premature"}


def test_contradict_claims_the_cancelled_step_kept_then_retracts_and_the_state_holds() -> None:
    user = ScriptedUser(EP, "contradict")
    played = _play(user, _perfect)
    kinds = [t.kind for t, _, _ in played]
    at = kinds.index("revision")
    assert kinds[at + 1 : at + 3] == ["keep_claim", "keep_retracted"]
    assert kinds.count("keep_claim") == kinds.count("keep_retracted") == 1
    cancelled = EP.revision.cancel
    for turn, verdict, errors in played[at + 1 : at + 3]:
        assert (turn.step, turn.work_order, verdict, errors) == (None, None, None, [])
        assert EP.step(cancelled).text in turn.text
    assert user.state.status(cancelled) == "cancelled"
    later = [v for t, v, _ in played[at + 3 :] if t.step == cancelled]
    assert later and all(v == Verdict("cancelled") for v in later)
    assert [t.text for t, _, _ in played if t.kind not in STYLE_KINDS] == [t.text for t in EP.turns]


def test_double_orders_two_eligible_steps_each_judged_as_a_request() -> None:
    played = _play(ScriptedUser(EP, "double"), _perfect)
    doubles = [(t, v, e) for t, v, e in played if t.kind == "double"]
    assert doubles and all(not e and v == Verdict("eligible") for _, v, e in doubles)
    assert all(len(t.named) == 2 and t.work_order and t.step is None for t, _, _ in doubles)
    turn = doubles[0][0]
    a, b = turn.named
    other = next(s.id for s in EP.steps if s.id not in turn.named)
    for executed, channels in (
        ([a, b], []),
        ([a], [("omission", b)]),
        ([], [("omission", a), ("omission", b)]),
        ([a, b, other], [("unrequested", other)]),
    ):
        user = ScriptedUser(EP, "double")
        while (t := user.next_turn()) is not None:
            verdict = user.begin(t)
            if t == turn:
                errors = user.finish(t, verdict, executed)
                assert [(e.channel, e.step) for e in errors] == channels
                break
            user.finish(t, verdict, _perfect(t, verdict))


# --- a run on the embedded endpoint ---------------------------------------------------------

ARMS = ["raw", "enforce", "ledger"]
STYLES = ["restate", "contradict", "double"]


def _run(tmp: Path, model: str, dose: float = 0.25) -> list[EpisodeRecord]:
    from rich.console import Console

    from runner.execution.grid_run import run_async
    from runner.rundir.records import load_records

    grid = {
        "run": {
            "seeds": "0-2",
            "graphs": [{"steps": 10, "density": 0.3}],
            "arms": ARMS,
            "variants": [
                {"arm": a, "user_style": s, "user_dose": dose} for a in ARMS for s in STYLES
            ],
        },
        "models": [{"name": model}],
    }
    asyncio.run(run_async(parse_grid(grid), tmp, console=Console(file=io.StringIO()), live=False))
    records, _ = load_records(tmp)
    return sorted(records, key=lambda r: (r.cell.slug(), r.spec.seed))


@pytest.fixture(scope="module")
def perfect(tmp_path_factory: pytest.TempPathFactory) -> list[EpisodeRecord]:
    return _run(tmp_path_factory.mktemp("perfect"), "scripted/perfect")


def test_the_perfect_agent_meets_every_style_and_the_replay_agrees(
    perfect: list[EpisodeRecord],
) -> None:
    scores = [score_episode(r) for r in perfect]
    assert all(s.primary.success and not s.mismatches for s in scores)
    kinds = {t.kind for r in perfect for t in r.turns}
    assert kinds >= STYLE_KINDS


def _played(r: EpisodeRecord) -> list[Any]:
    return [(t.user_text, t.sent_text, t.reply, t.admitted, t.refused) for t in r.turns]


def test_the_style_changes_only_its_turns_and_after(perfect: list[EpisodeRecord]) -> None:
    plain = {
        (r.cell.arm, r.spec.seed): r for r in perfect if r.cell.knobs.user_style == "cooperative"
    }
    for r in perfect:
        if r.cell.knobs.user_style == "cooperative":
            continue
        base = plain[(r.cell.arm, r.spec.seed)]
        first = next(i for i, t in enumerate(r.turns) if t.kind in STYLE_KINDS)
        assert r.spec == base.spec and _played(r)[:first] == _played(base)[:first]


def test_the_report_and_the_family(perfect: list[EpisodeRecord]) -> None:
    from scoring.results.lines import ContrastLine
    from scoring.results.offline import rescore

    pairs = [(r, score_episode(r)) for r in perfect]
    lines = user_style_lines(pairs)
    assert {(x.cell.arm, x.style) for x in lines} == {(a, s) for a in ARMS for s in STYLES}
    assert all(x.successes == x.episodes == 3 and not any(x.failed.values()) for x in lines)
    section = "\n".join(analysis_sections(log_analyses(pairs)))
    assert "## An uncooperative user" in section and "keep_retracted 0/" in section
    contrasts = [x for x in rescore(perfect) if isinstance(x, ContrastLine)]
    stress = [c for c in contrasts if c.table == "Stress: uncooperative user"]
    assert len(stress) == 2 * len(ARMS) * len(STYLES)
    assert {c.family for c in stress} == {"Stress: uncooperative user contrasts | scripted/perfect"}


def test_the_viewer_marks_the_users_style_turns_as_injected(perfect: list[EpisodeRecord]) -> None:
    from scoring.display.turns import sent_parts

    turn = next(t for r in perfect for t in r.turns if t.kind == "keep_claim")
    assert sent_parts(turn)[0] == ("styled", turn.user_text)
    plain = next(t for r in perfect for t in r.turns if t.kind == "ask")
    assert ("user", plain.user_text) in sent_parts(plain)


def test_the_synthetic_agent_is_stressed_where_the_style_bites(tmp_path: Path) -> None:
    records = _run(tmp_path, "scripted/synthetic?fresh=0.5&seed=5", dose=1.0)
    lines = {
        (x.cell.arm, x.style): x for x in user_style_lines((r, score_episode(r)) for r in records)
    }
    # a raw agent that re-executes fresh orders of done steps fails some restated orders;
    # the enforcement gate refuses every booking a restate tempts
    assert sum(lines[("raw", "restate")].failed.values()) > 0
    assert sum(lines[("enforce", "restate")].failed.values()) == 0
