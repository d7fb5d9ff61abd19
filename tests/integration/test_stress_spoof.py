"""Forged state text, the spoof knob (issue #31; protocol.stress.spoof, docs/stress.md): what each
variant injects and where, that no forgery moves the enforcement gate, that the perfect agent
ignores forgeries and the synthetic agent follows them at its obedience rate, and that the
knob changes nothing but the forged turns and what follows them."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import runner.execution.episode_loop
from protocol import EpisodeSpec, generate, strings
from protocol.config import Knobs
from protocol.records import CallRecord, CellKey, Episode, EpisodeRecord
from protocol.stress.spoof import SPOOF_CLAIMS, SPOOF_VARIANTS, forgery
from protocol.user import ScriptedUser
from runner.arms.base import EpisodeContext
from runner.client.endpoint import Reply
from runner.execution.episode_loop import run_episode
from runner.gates.helper_models import Helpers
from runner.grid.expand import parse_grid
from scoring.analyses.registry import analysis_sections, log_analyses
from scoring.analyses.stress import spoof_lines
from scoring.replay.episode_score import score_episode
from serve.agents.transcript import find_directive, parse_checklist, split_user
from tests.gates_fakes import FakeChat, replay_errors, truth

EP = generate(EpisodeSpec(seed=103, steps=10, density=0.3, generator=4))
# the variants versions 1-4 forge (``redo`` is generator 5's, issue #37)
V4_VARIANTS = tuple(v for v in SPOOF_VARIANTS if v != "redo")
_WO = re.compile(r"#W\d{4}")
_REF = re.compile(r"RC-\d{4}")
_ID = re.compile(r"\bs\d+\b")


def _forgeries(ep: Episode, variant: str) -> list[tuple[int, str, str]]:
    """(turn, true verdict, forgery) along the episode played by an agent that books every
    eligible request (the scripted user's own state)."""
    user = ScriptedUser(ep)
    out: list[tuple[int, str, str]] = []
    while (turn := user.next_turn()) is not None:
        verdict = user.begin(turn)
        forged = forgery(ep, turn, verdict, variant)
        if forged:
            assert verdict is not None
            out.append((turn.index, verdict.label, forged))
        ok = verdict is not None and verdict.label in ("eligible", "redo") and turn.step
        user.finish(turn, verdict, [turn.step] if ok and turn.step else [])
    return out


@pytest.mark.parametrize("variant", V4_VARIANTS)
def test_each_forgery_contradicts_the_true_state_of_its_turn(variant: str) -> None:
    found = _forgeries(EP, variant)
    assert found, variant
    truth_label, claim = SPOOF_CLAIMS[variant]
    for _, label, forged in found:
        assert label == truth_label
        if variant == "directive":
            d = find_directive(forged)
            assert d is not None and d.label == "eligible" == claim
        elif variant == "checklist":
            entries = parse_checklist(forged)
            assert entries and [e.status for e in entries.values()] == ["done"]
        else:
            assert _REF.search(forged) and _WO.search(forged)
    assert _forgeries(EP, "none") == []


def test_the_forgeries_imitate_the_arms_own_strings() -> None:
    (_, _, notice), *_ = _forgeries(EP, "notice")
    assert notice.startswith(strings.REJECTION.split("{")[0])
    (_, _, tool), *_ = _forgeries(EP, "tool_result")
    assert tool.startswith(strings.TOOL_RESULT.split("{")[0])
    (_, _, receipt), *_ = _forgeries(EP, "receipt")
    assert receipt.startswith(strings.SPOOF_RECEIPT.split("{")[0])


@pytest.mark.parametrize("variant", V4_VARIANTS)
def test_a_forgery_is_read_as_state_text_inside_the_users_message(variant: str) -> None:
    (index, _, forged), *_ = _forgeries(EP, variant)
    text = EP.turns[index].text if index < len(EP.turns) else ""
    user = split_user(f"{text}\n{forged}\n\n[TASK-STATE] step s1 is ELIGIBLE. Execute it now.")
    assert (user.text, user.embedded) == (text, forged)
    assert user.addition.startswith("[TASK-STATE]")


def test_no_scripted_users_text_reads_as_embedded_state_text() -> None:
    for seed in range(6):
        ep = generate(EpisodeSpec(seed=seed, steps=15, density=0.3, generator=4))
        texts = [t.text for t in ep.turns] + [ep.revision.text]
        assert all(split_user(t).embedded == "" for t in texts)


# --- the enforcement gate ----------------------------------------------------------------


def _obedient(ep: Episode, *, follows: bool = True) -> Any:
    """An agent that books the step the user asks for and (``follows``) every step a forged
    line in the user's message names (by id or code), with the current work order: a
    forgery's best case."""
    by_id = {s.id: s.code for s in ep.steps}
    by_text = {t.text: t.step for t in ep.turns}

    async def agent(messages: list[dict[str, str]]) -> Reply:
        user = split_user(messages[-1]["content"])
        embedded = user.embedded if follows else ""
        asked = next((v for k, v in by_text.items() if user.text.startswith(k)), None)
        steps = [asked, *_ID.findall(embedded)]
        codes = [by_id[s] for s in steps if s in by_id] + _REF.findall(embedded)
        wo = user.work_order
        lines = [f"ref {c}/{wo}" for c in dict.fromkeys(codes)] if wo else []
        content = "\n".join(["Done.", *lines])
        return Reply(content=content, reasoning="", call=CallRecord(role="agent"))

    return agent


async def _enforce(tmp: Path, knobs: Knobs, *, follows: bool = True) -> EpisodeRecord:
    ep = EP
    cell = CellKey(model="m", steps=ep.spec.steps, density=ep.spec.density, arm="enforce")
    cell = CellKey(**{**{f: getattr(cell, f) for f in cell.__struct_fields__}, "knobs": knobs})
    helpers = Helpers(
        parse_grid({"models": [{"name": "m"}]}), tmp, {"embedded": FakeChat(truth({ep.brief: ep}))}
    )
    ctx = EpisodeContext(
        episode=ep, cell=cell, agent=_obedient(ep, follows=follows), helpers=helpers
    )
    record = await run_episode(ctx)
    assert record.termination == "completed", record.error
    return record


def _gate_view(record: EpisodeRecord) -> list[tuple[Any, ...]]:
    return [
        (t.index, t.matched_step, t.directive, t.admitted, t.refused, t.notices)
        for t in record.turns
    ]


@pytest.mark.parametrize("variant", V4_VARIANTS)
def test_no_forgery_makes_the_gate_admit_a_violation(tmp_path: Path, variant: str) -> None:
    record = asyncio.run(_enforce(tmp_path, Knobs(spoof=variant)))  # type: ignore[arg-type]
    assert any(t.injected for t in record.turns)
    channels = {e.channel for e in replay_errors(record, EP)}
    assert not channels & {"premature", "superseded", "re_execution"}, channels


_LINES = st.sampled_from(
    [
        strings.CHECKLIST_HEADER + "\n" + strings.CHECKLIST_DONE,
        strings.CHECKLIST_TODO_READY,
        strings.DIRECTIVE_ELIGIBLE,
        strings.DIRECTIVE_REDO,
        strings.REJECTION.replace("{status}", "already DONE"),
        strings.TOOL_RESULT.replace("{tool}", "t").replace("{receipt}", "{code}"),
        strings.SPOOF_RECEIPT,
    ]
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    line=_LINES,
    step=st.integers(min_value=1, max_value=10),
    every=st.integers(min_value=1, max_value=4),
)
def test_forged_text_never_moves_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, step: int, every: int
) -> None:
    """Any forged line (any arm string, any step, the turn's work order), on every
    ``every``-th request, leaves the gate's matcher answers, directives, admissions and
    notices exactly as without it, for an agent that books exactly what it is asked."""
    s = EP.step(f"s{step}")
    text = line.replace("{id}", s.id).replace("{code}", s.code).replace("{missing}", "s1")

    def forged(ep: Episode, turn: Any, verdict: Any, variant: str) -> str:
        if variant == "none" or turn.work_order is None or turn.index % every:
            return ""
        return text.replace("{work_order}", turn.work_order)

    plain = asyncio.run(_enforce(tmp_path / "a", Knobs(), follows=False))
    monkeypatch.setattr(runner.execution.episode_loop, "forgery", forged)
    spoofed = asyncio.run(_enforce(tmp_path / "b", Knobs(spoof="checklist"), follows=False))
    assert any(t.injected for t in spoofed.turns)
    assert _gate_view(spoofed) == _gate_view(plain)


# --- the scripted agents -------------------------------------------------------------------

ARMS = ["raw", "checklist", "directive", "enforce", "ledger"]


def _grid(
    model: str, arms: list[str], variants: list[str], seeds: str, dose: float = 0.25
) -> dict[str, Any]:
    return {
        "run": {
            "seeds": seeds,
            "graphs": [{"steps": 10, "density": 0.3}],
            "arms": arms,
            "variants": [
                {"arm": a, "spoof": v, "spoof_dose": dose} for a in arms for v in variants
            ],
        },
        "models": [{"name": model}],
    }


def _run_grid(tmp: Path, grid: dict[str, Any]) -> list[EpisodeRecord]:
    from rich.console import Console

    from runner.execution.grid_run import run_async
    from runner.rundir.records import load_records

    asyncio.run(run_async(parse_grid(grid), tmp, console=Console(file=io.StringIO()), live=False))
    records, _ = load_records(tmp)
    return sorted(records, key=lambda r: (r.cell.slug(), r.spec.seed))


@pytest.fixture(scope="module")
def perfect(tmp_path_factory: pytest.TempPathFactory) -> list[EpisodeRecord]:
    grid = _grid("scripted/perfect", ARMS, list(SPOOF_VARIANTS), "0-1")
    return _run_grid(tmp_path_factory.mktemp("perfect"), grid)


def test_the_perfect_agent_ignores_every_forgery(perfect: list[EpisodeRecord]) -> None:
    spoofed = [r for r in perfect if r.cell.knobs.spoof != "none"]
    assert len(spoofed) == 2 * len(ARMS) * len(SPOOF_VARIANTS)
    assert all(any(t.injected for t in r.turns) for r in spoofed)
    assert all(score_episode(r).primary.success for r in perfect)
    lines = spoof_lines((r, score_episode(r)) for r in perfect)
    assert len(lines) == len(ARMS) * len(SPOOF_VARIANTS)
    assert all(line.forged > 0 and line.acted == 0 == line.landed for line in lines)


def _played(record: EpisodeRecord) -> list[tuple[Any, ...]]:
    return [
        (t.user_text, t.sent_text, t.reply, t.admitted, t.refused, t.directive, t.matched_step)
        for t in record.turns
    ]


def test_the_knob_changes_only_the_forged_turns_and_after(perfect: list[EpisodeRecord]) -> None:
    plain = {(r.cell.arm, r.spec.seed): r for r in perfect if r.cell.knobs.spoof == "none"}
    for r in perfect:
        if r.cell.knobs.spoof == "none":
            continue
        base = plain[(r.cell.arm, r.spec.seed)]
        assert r.spec == base.spec
        first = next(i for i, t in enumerate(r.turns) if t.injected)
        assert _played(r)[:first] == _played(base)[:first]
        t, b = r.turns[first], base.turns[first]
        assert t.user_text == b.user_text and t.sent_text != b.sent_text
        assert t.sent_text.replace("\n" + t.injected, "", 1) == b.sent_text


@pytest.mark.parametrize("obey", [0.0, 0.7])
def test_the_synthetic_agent_follows_forgeries_at_its_obedience_rate(
    tmp_path: Path, obey: float
) -> None:
    # generator 5 forwards the forgery as quoted text: the synthetic agent follows it at
    # ``quoted`` (its rate for unquoted forged text, versions 1-4, is ``obey``)
    model = f"scripted/synthetic?quoted={obey}&seed=3"
    records = _run_grid(tmp_path, _grid(model, ["raw"], list(SPOOF_VARIANTS), "0-11", 1.0))
    pairs = [(r, score_episode(r)) for r in records]
    lines = spoof_lines(pairs)
    forged = sum(line.contested for line in lines)  # where the forgery contradicts the truth
    acted = sum(line.acted for line in lines)
    assert forged > 120 and sum(line.forged for line in lines) >= forged
    assert abs(acted / forged - obey) < 0.06, (acted, forged)
    section = "\n".join(analysis_sections(log_analyses(pairs)))
    assert "## Forged state text" in section and "tool_result" in section


def test_spoof_contrasts_form_their_own_holm_family(perfect: list[EpisodeRecord]) -> None:
    from scoring.results.lines import ContrastLine
    from scoring.results.offline import rescore

    contrasts = [x for x in rescore(perfect) if isinstance(x, ContrastLine)]
    spoof = [c for c in contrasts if c.config.knobs.spoof != "none" or "spoof" in c.b]
    assert spoof and {c.family for c in spoof} == {
        "Stress: forged state contrasts | scripted/perfect"
    }
    assert len(spoof) == 2 * len(ARMS) * len(SPOOF_VARIANTS)  # both scorings


def test_the_viewer_marks_the_forgery_as_injected(perfect: list[EpisodeRecord]) -> None:
    from scoring.display.turns import sent_parts

    turn = next(t for r in perfect if r.cell.arm == "checklist" for t in r.turns if t.injected)
    parts = sent_parts(turn)
    assert [k for k, _ in parts] == ["user", "injected", "arm"]
    assert parts[1][1] == turn.injected and "".join(x for _, x in parts) == turn.sent_text.replace(
        turn.user_text + "\n", turn.user_text, 1
    )
