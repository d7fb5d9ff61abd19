"""Documented figures reproduce (#46): each figure docs/stress.md and docs/askback.md quote is
rerun here with the command the doc gives beside it, and the doc's sentence (or table row)
must hold what the rerun prints.

A change that moves a figure on purpose fails its test: rerun the doc's command (or this
test with ``-s``, which prints the figure) and paste the new sentence into the doc. The
small, pure figure runs in the default suite; the ones that run grids are marked ``slow``
(as ``just drill`` runs them: ``pytest -q -m slow -o addopts='--import-mode=importlib'
tests/docs/test_doc_figures.py``; about 20 minutes on two busy cores, most of it the
user-style, ask-back and escalation grids).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from protocol import EpisodeSpec, generate
from protocol.arms.askback import answered_step
from protocol.config import UserStyle
from protocol.records import EpisodeRecord
from protocol.stress.doses import user_turns
from runner.rundir.records import load_records
from scoring.analyses.doses import DoseLine, dose_lines, outcomes
from scoring.analyses.pressure import pressure_lines
from scoring.analyses.pressure_episodes import PressureEpisodeLine, pressure_episode_lines
from scoring.analyses.stress import ToolFailureLine, spoof_lines, tool_failure_lines
from scoring.analyses.stress_turns import turn_outcomes
from scoring.replay.askback import Burden, per_recovery
from scoring.replay.episode_score import EpisodeScore, score_episode

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "stress.md"
ASKBACK_DOC = ROOT / "docs" / "askback.md"


def _doc(path: Path = DOC) -> str:
    """The doc with its whitespace collapsed (a sentence may wrap anywhere)."""
    return " ".join(path.read_text(encoding="utf-8").split())


def _holds(sentence: str, command: str | None = None, path: Path = DOC) -> None:
    print(sentence)  # the figure as the rerun prints it (-s)
    doc = _doc(path)
    name = f"docs/{path.name}"
    assert sentence in doc, f"{name} no longer reproduces; the rerun says: {sentence}"
    if command is not None:
        assert command in doc, f"{name} lost the figure's command: {command}"


def _ladder_run(command: str, out: Path) -> list[EpisodeRecord]:
    """Run the doc's ``ladder run ...`` command with ``--out`` under ``out``."""
    args = shlex.split(command)
    assert args[:2] == ["ladder", "run"]
    cmd = [sys.executable, "-m", "ladder", "run", *args[2:], "--out", str(out), "--no-live"]
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, timeout=1200)
    records, _ = load_records(out)
    return records


def _pairs(records: Iterable[EpisodeRecord]) -> list[tuple[EpisodeRecord, EpisodeScore]]:
    return [(r, score_episode(r)) for r in records]


# -- stressed turns per episode (pure) ------------------------------------------------------

ELIGIBLE = "python -m pytest -s -p no:xdist tests/docs/test_doc_figures.py -k per_episode"


def test_style_turns_per_episode_at_dose_1() -> None:
    def mean(style: UserStyle, steps: int) -> float:
        total = 0
        for seed in range(100, 120):
            spec = EpisodeSpec(seed=seed, steps=steps, density=0.3, generator=5, brief="amended")
            total += len(user_turns(generate(spec), style, 1.0))
        return total / 20

    r10, r15 = mean("restate", 10), mean("restate", 15)
    d10, d15 = mean("double", 10), mean("double", 15)
    c10, c15 = mean("contradict", 10) / 2, mean("contradict", 15) / 2
    _holds(
        f"restate {r10:.1f} / {r15:.1f}, double {d10:.1f} / {d15:.1f}, contradict pairs "
        f"{c10:.2f} / {c15:.2f} at S = 10 / 15",
        ELIGIBLE,
    )


# -- the uncooperative user's dose-response (a grid run) ------------------------------------

RESTATE = (
    "ladder run runner/grids/user-style.toml --seeds 100-111 --served scripted/synthetic "
    "--base-url embedded"
)


@pytest.fixture(scope="module")
def user_style_pairs(
    tmp_path_factory: pytest.TempPathFactory,
) -> list[tuple[EpisodeRecord, EpisodeScore]]:
    """One run of the doc's command, scored (every figure below quotes it)."""
    out = tmp_path_factory.mktemp("user-style")
    return _pairs(_ladder_run(RESTATE, out))


@pytest.fixture(scope="module")
def user_style(user_style_pairs: list[tuple[EpisodeRecord, EpisodeScore]]) -> list[DoseLine]:
    """The uncooperative user's dose-response lines."""
    return list(dose_lines(outcomes(user_style_pairs)))


def _by(lines: Sequence[DoseLine], style: str) -> dict[tuple[str, float], DoseLine]:
    return {(x.cell.arm, x.dose): x for x in lines if x.stress == f"user_style={style}"}


def _won(lines: Sequence[DoseLine], style: str, arm: str, doses: Sequence[float]) -> str:
    by = _by(lines, style)
    return ", ".join(f"{by[(arm, d)].successes}/{by[(arm, d)].episodes}" for d in doses)


@pytest.mark.slow
@pytest.mark.process
def test_restate_dose_response(user_style: list[DoseLine]) -> None:
    by = _by(user_style, "restate")
    doses = (0.0, 0.1, 0.25, 1.0)
    raw = [f"{by[('raw', d)].successes}/{by[('raw', d)].episodes}" for d in doses]
    enforce = _won(user_style, "restate", "enforce", doses)
    bounds = sorted({f"{a} {by[(a, 0.1)].bound}" for a in ("raw", "enforce") if by[(a, 0.1)].bound})
    _holds(
        f"raw under `restate` {raw[0]} at dose 0, {raw[1]} at 0.1, {raw[2]} at 0.25, {raw[3]} "
        f"at 1; enforce {enforce}; ceiling or floor at dose 0.1: "
        f"{', '.join(bounds) or 'none'}.",
        RESTATE,
    )


@pytest.mark.slow
@pytest.mark.process
def test_the_plain_controls_pressure(user_style: list[DoseLine]) -> None:
    """Restate and double against their plain controls in the same slots (#46)."""
    doses = (0.1, 0.25, 1.0)
    parts = []
    for style in ("restate", "double"):
        plain = f"{style}_plain"
        for arm in ("raw", "enforce"):
            control = _by(user_style, style)[(arm, 0.0)]
            turns = _by(user_style, style)[(arm, 1.0)]
            parts.append(
                f"{arm} under `{style}` {_won(user_style, style, arm, doses)} and under "
                f"`{plain}` {_won(user_style, plain, arm, doses)} (control "
                f"{control.successes}/{control.episodes}; stressed turns per episode at dose 1 "
                f"{turns.stressed_mean:.2f})"
            )
    _holds("at doses 0.1, 0.25, 1: " + "; ".join(parts) + ".", RESTATE)


@pytest.mark.slow
@pytest.mark.process
def test_the_pressure_section(user_style_pairs: list[tuple[EpisodeRecord, EpisodeScore]]) -> None:
    """The report's "Stress pressure" lines: each style minus its plain control (#46)."""
    lines = pressure_lines(turn_outcomes(user_style_pairs))
    by = {(x.cell.arm, x.style, x.dose): x for x in lines}
    parts = []
    for style in ("restate", "double"):
        for arm in ("raw", "enforce"):
            cells = [by[(arm, style, d)] for d in (0.1, 0.25, 1.0)]
            parts.append(
                f"{arm} `{style}` "
                + ", ".join(
                    f"{x.errors}/{x.turns} against {x.control_errors}/{x.turns} "
                    f"({x.pressure:+.3f}, Holm p {x.p_holm:.3g})"
                    for x in cells
                )
            )
    _holds(
        "errors on the stressed turns, styled against plain, at doses 0.1, 0.25, 1: "
        + "; ".join(parts)
        + ".",
        RESTATE,
    )


def pressure_episode_figure(lines: Sequence[PressureEpisodeLine]) -> str:
    """docs/stress.md's episode-scale pressure sentence from the section's lines."""
    by = {(x.cell.arm, x.style, x.dose, x.scoring): x for x in lines}
    parts = []
    for style in ("restate", "double"):
        for arm in ("raw", "enforce"):
            cells = []
            for d in (0.1, 0.25, 1.0):
                s, a = by[(arm, style, d, "strict")], by[(arm, style, d, "decline_aware")]
                cells.append(
                    f"{s.successes}/{s.seeds} against {s.control_successes}/{s.seeds} and "
                    f"{a.successes}/{a.seeds} against {a.control_successes}/{a.seeds} "
                    f"(discordant {s.styled_only + s.plain_only} and "
                    f"{a.styled_only + a.plain_only}, Holm p {s.p_holm:.3g} and {a.p_holm:.3g})"
                )
            parts.append(f"{arm} `{style}` " + ", ".join(cells))
    return "; ".join(parts) + "."


@pytest.mark.slow
@pytest.mark.process
def test_the_pressure_episode_scale(
    user_style_pairs: list[tuple[EpisodeRecord, EpisodeScore]],
) -> None:
    """The report's "On the episode scale" lines under "Stress pressure" (#46)."""
    lines = pressure_episode_lines(turn_outcomes(user_style_pairs))
    _holds(
        "strict and decline-aware successes, styled against plain, at doses 0.1, 0.25, 1: "
        + pressure_episode_figure(lines),
        RESTATE,
    )


# -- forged tool results on the harness (a grid run) ----------------------------------------

TOOL_RESULT = "ladder run tests/data/figures/harness-tool-result.toml"


@pytest.mark.slow
@pytest.mark.process
def test_forged_tool_results_on_the_harness(tmp_path: Path) -> None:
    lines = spoof_lines(_pairs(_ladder_run(TOOL_RESULT, tmp_path)))
    by = {x.cell.arm: x for x in lines}
    raw, enforce = by["raw"], by["enforce"]
    _holds(
        f"acted on {raw.acted}/{raw.contested} contested forged turns in raw, "
        f"{enforce.acted}/{enforce.contested} behind enforce",
        TOOL_RESULT,
    )


# -- at-most-once under tool failure (a grid run) -------------------------------------------

AT_MOST_ONCE = (
    "ladder run runner/grids/at-most-once.toml --seeds 300-307 --model qwen3-235b --served "
    "scripted/synthetic --base-url embedded"
)


@pytest.mark.slow
@pytest.mark.process
def test_at_most_once(tmp_path: Path) -> None:
    pairs = _pairs(_ladder_run(AT_MOST_ONCE, tmp_path))
    lines = tool_failure_lines(pairs)
    shares = (0.0, 0.5, 1.0)

    def line(arm: str, share: float) -> ToolFailureLine:
        return next(
            x
            for x in lines
            if x.cell.arm == arm
            and x.cell.knobs.binding != "request"
            and x.rate == 0.3
            and x.cell.knobs.tool_failure_landed == share
        )

    def row(arm: str, attr: str) -> str:
        return " / ".join(str(getattr(line(arm, s), attr)) for s in shares)

    def channel(arm: str, name: str) -> str:
        return " / ".join(str(line(arm, s).channels.get(name, 0)) for s in shares)

    _holds(
        f"strict successes of 8 at landed share 0 / 0.5 / 1 (writes landed: "
        f"{row('raw', 'landed')}): raw {row('raw', 'successes')} (re-executions "
        f"{channel('raw', 're_execution')}), checklist {row('checklist', 'successes')}, "
        f"directive {row('directive', 'successes')}, enforce {row('enforce', 'successes')} "
        f"(re-executions {channel('enforce', 're_execution')}, omissions "
        f"{channel('enforce', 'omission')})",
        AT_MOST_ONCE,
    )


# -- ask back on the embedded endpoint (docs/askback.md; a grid run) ------------------------

ASKBACK = "ladder run tests/data/figures/askback-wording.toml"
ASKBACK_KNOBS: tuple[tuple[str, dict[str, object]], ...] = (
    ("none", {}),
    ("show", {"show": True}),
    ("ask = unresolved", {"ask": "unresolved"}),
    ("ask = second_reading", {"ask": "second_reading"}),
    ("show + ask = second_reading", {"show": True, "ask": "second_reading"}),
)


def askback_rows(pairs: Sequence[tuple[EpisodeRecord, EpisodeScore]]) -> list[str]:
    """docs/askback.md's table rows: per gate and knobs, strict successes, questions per
    episode, readings recovered, asks per recovery, extra matcher calls per episode."""
    rows: list[str] = []
    for arm in ("directive", "enforce"):
        for name, knobs in ASKBACK_KNOBS:
            cell = [
                (r, s)
                for r, s in pairs
                if r.cell.arm == arm
                and r.cell.knobs.show == knobs.get("show", False)
                and r.cell.knobs.ask == knobs.get("ask", "off")
            ]
            n = len(cell)
            wins = sum(s.primary.success for _, s in cell)
            cols = [arm, name, f"{wins}/{n}"]
            burdens = [s.burden for _, s in cell if s.burden is not None]
            if not burdens:
                cols += ["-"] * 4
            else:
                b = sum(burdens, Burden())
                cols += [
                    f"{b.questions / n:.2f}",
                    str(b.recovered),
                    per_recovery(b),
                    f"{b.extra_matcher_calls / n:.2f}",
                ]
            rows.append("| " + " | ".join(cols) + " |")
    return rows


@pytest.fixture(scope="module")
def askback_pairs(
    tmp_path_factory: pytest.TempPathFactory,
) -> list[tuple[EpisodeRecord, EpisodeScore]]:
    """One run of the ask-back figure grid, scored (the table and the sentences below)."""
    return _pairs(_ladder_run(ASKBACK, tmp_path_factory.mktemp("askback")))


@pytest.mark.slow
@pytest.mark.process
def test_askback_on_the_embedded_endpoint(
    askback_pairs: list[tuple[EpisodeRecord, EpisodeScore]],
) -> None:
    for row in askback_rows(askback_pairs):
        _holds(row, ASKBACK, ASKBACK_DOC)


def probe_questions(
    pairs: Sequence[tuple[EpisodeRecord, EpisodeScore]], ask: str
) -> tuple[int, int, int, int]:
    """Per cell of ``ask`` (without ``show``; the same in both gates, which the test checks):
    the questions, those on an ambiguous probe, the probes whose answer names a step (one of
    the two still eligible; else "None of those"), and those whose reading of the answer
    names the step the user meant."""
    per_arm = set()
    for arm in ("directive", "enforce"):
        questions = probes = answered = named = 0
        for r, _ in pairs:
            k = r.cell.knobs
            if r.cell.arm != arm or k.ask != ask or k.show:
                continue
            episode = generate(r.spec)
            for t in r.turns:
                if t.question is None:
                    continue
                questions += 1
                if t.kind == "ambiguous":
                    probes += 1
                    meant = answered_step(episode, t.as_turn(), t.answer)
                    answered += meant is not None
                    named += meant is not None and t.matched_step == meant
        per_arm.add((questions, probes, answered, named))
    assert len(per_arm) == 1, per_arm  # both gates ask alike (paired dice)
    return per_arm.pop()


@pytest.mark.slow
@pytest.mark.process
def test_askback_probe_questions(askback_pairs: list[tuple[EpisodeRecord, EpisodeScore]]) -> None:
    q, p, answered, named = probe_questions(askback_pairs, "unresolved")
    q2, p2, _, _ = probe_questions(askback_pairs, "second_reading")
    _holds(
        f"{p} of `unresolved`'s {q} questions per cell are the probes (the rest are the "
        f"no-resolves), and on {named} of them the reading of the answer names the step meant "
        f"(of the other {p - named}, on {p - answered} neither named step was still eligible, "
        f"so the user answered `None of those`, and on {answered - named} the matcher missed "
        "the answer)",
        ASKBACK,
        ASKBACK_DOC,
    )
    _holds(f"which asks on {q2} turns per cell ({p2} of them probes)", ASKBACK, ASKBACK_DOC)


ESCALATE = (
    "ladder run runner/grids/askback-escalate.toml --model qwen3.6-35b --base-url embedded "
    "--served 'scripted/synthetic?obey=0.8&compile_cancel_left=1'"
)


def escalate_rows(pairs: Sequence[tuple[EpisodeRecord, EpisodeScore]]) -> list[str]:
    """docs/askback.md's escalation table rows: strict successes, escalations per episode,
    overrides and asks per recovery, per cell (the corrupted cells plain / with escalate)."""

    def cell(arm: str, eps: float, esc: bool) -> list[EpisodeScore]:
        return [
            sc
            for r, sc in pairs
            if r.cell.arm == arm and r.cell.knobs.corruption == eps and r.cell.knobs.escalate == esc
        ]

    def won(scores: list[EpisodeScore]) -> str:
        return f"{sum(x.primary.success for x in scores)}/{len(scores)}"

    def burden(scores: list[EpisodeScore]) -> list[str]:
        b = sum((x.burden for x in scores if x.burden is not None), Burden())
        return [f"{b.escalations / len(scores):.2f}", str(b.overrides), per_recovery(b)]

    rows = [
        ["enforce", won(cell("enforce", 0.0, False)), "-", "-", "-"],
        ["enforce, escalate", won(cell("enforce", 0.0, True)), *burden(cell("enforce", 0.0, True))],
        ["hybrid (validator fallback)", won(cell("hybrid", 0.0, False)), "-", "-", "-"],
        ["hybrid, escalate", won(cell("hybrid", 0.0, True)), *burden(cell("hybrid", 0.0, True))],
    ]
    for eps, name in ((1e-3, "1e-3"), (3e-3, "3e-3"), (1e-2, "1e-2")):
        plain, esc = cell("enforce", eps, False), cell("enforce", eps, True)
        rows.append(
            [f"enforce, epsilon {name} / + escalate", f"{won(plain)} / {won(esc)}", *burden(esc)]
        )
    return ["| " + " | ".join(r) + " |" for r in rows]


@pytest.mark.slow
@pytest.mark.process
def test_escalation_on_the_embedded_endpoint(tmp_path: Path) -> None:
    rows = escalate_rows(_pairs(_ladder_run(ESCALATE, tmp_path)))
    for row in rows:
        _holds(row, ESCALATE, ASKBACK_DOC)
