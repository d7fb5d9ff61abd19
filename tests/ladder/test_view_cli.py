"""``ladder show`` through its plain-text output, and both commands' bad input."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app
from runner.rundir.logs import read_logs
from scoring.replay.episode_score import score_episode
from tests.view_run import make_run

runner = CliRunner()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("viewrun"))


def _failed_raw(run_dir: Path) -> tuple[str, int]:
    for (slug, seed), rec in sorted(read_logs(run_dir).items()):
        if rec.cell.arm == "raw" and not score_episode(rec).primary.success:
            return slug, seed
    raise AssertionError("the synthetic agent failed no raw episode")


def test_show_prints_a_failed_episode_turn_by_turn_as_plain_text(run_dir: Path) -> None:
    slug, seed = _failed_raw(run_dir)
    result = runner.invoke(app, ["show", str(run_dir), "--arm", "raw", "--failed"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "\x1b[" not in out  # piped: no terminal escapes
    rec = read_logs(run_dir)[(slug, seed)]
    score = score_episode(rec)
    head = out.splitlines()[:2]
    assert head[0] == f"== raw · seed {seed} · {slug}"
    assert "strict FAIL" in head[1] and f"wall {rec.wall_s:.2f} s" in head[1]
    agent = sum(c.prompt_tokens + c.completion_tokens for t in rec.turns for c in t.calls)
    assert f"tokens agent {agent} helper 0" in head[1]
    failing = [t for t in score.primary.turns if t.errors]
    marked = [ln for ln in out.splitlines() if ln.startswith("!! turn ")]
    assert len(marked) == len(failing)
    for t, line in zip(failing, marked, strict=True):
        e = t.errors[0]
        assert (
            line.startswith(f"!! turn {t.index} · {t.kind}")
            and f"FAILED: {e.channel} {e.step}" in line
        )
    assert sum(ln.startswith("-- turn ") for ln in out.splitlines()) == len(rec.turns) - len(
        failing
    )
    first = rec.turns[failing[0].index]
    for line in first.reply.splitlines():
        assert f"      {line}" in out
    # the other failed raw episodes are listed ("1 more episode matches" or "N more ... match");
    # how many there are is the synthetic agent's (its dice are paired by seed and turn, #46)
    others = (
        sum(
            r.cell.arm == "raw" and not score_episode(r).primary.success
            for r in read_logs(run_dir).values()
        )
        - 1
    )
    if others:
        assert f"{others} more episode" in out
        assert f"seed {seed}\n" not in out.split("more episode")[1]
    else:
        assert "more episode" not in out


def test_show_draws_arm_additions_apart_and_the_matcher_and_directive(run_dir: Path) -> None:
    result = runner.invoke(app, ["show", str(run_dir), "--arm", "directive", "--seed", "100"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    lines = out.splitlines()
    arm = [lines[i + 1] for i, ln in enumerate(lines) if ln == "    added by the arm:"]
    assert arm and all(a.startswith("      [TASK-STATE] step s") for a in arm)
    assert "matcher: step s" in out and "directive: [TASK-STATE]" in out
    assert "compile: 0 steps differ from the generator" in out
    assert "more episodes match" not in out


def test_show_failing_turns_only_and_channel_filter(run_dir: Path) -> None:
    result = runner.invoke(
        app, ["show", str(run_dir), "--channel", "re_execution", "--failing-turns", "--limit", "50"]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert not any(ln.startswith("-- turn ") for ln in lines)
    assert any("FAILED: re_execution" in ln for ln in lines)
    episodes = [ln for ln in lines if ln.startswith("== ")]
    expected = sum(
        bool(score_episode(r).primary.channels["re_execution"]) for r in read_logs(run_dir).values()
    )
    assert len(episodes) == expected


def test_show_with_nothing_matching_exits_1(run_dir: Path) -> None:
    logs = read_logs(run_dir)
    # an (arm, seed) whose every episode succeeded: nothing there matches --failed
    arm, seed = next(
        (rec.cell.arm, s)
        for (_, s), rec in sorted(logs.items())
        if all(
            score_episode(r).primary.success
            for (_, s2), r in logs.items()
            if s2 == s and r.cell.arm == rec.cell.arm
        )
    )
    args = ["show", str(run_dir), "--arm", arm, "--seed", str(seed), "--failed"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1 and "no episode matches" in result.output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["show", "{dir}", "--channel", "bogus"], "--channel must be one of"),
        (["show", "{dir}", "--cell", "nosuchcell"], "no cell 'nosuchcell'"),
        (["show", "{dir}", "--limit", "0"], "--limit must be at least 1"),
        (["show", "{missing}"], "not a directory"),
        (["show", "{empty}"], "no readable episode record"),
        (["view", "{missing}"], "not a directory"),
        (["view", "{dir}", "--port", "70000"], "--port must be in 0..65535"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    run_dir: Path, tmp_path: Path, args: list[str], needle: str
) -> None:
    (tmp_path / "empty").mkdir()
    copy = tmp_path / "run"
    shutil.copytree(run_dir / "logs", copy / "logs")
    subst = {
        "dir": str(copy),
        "missing": str(tmp_path / "missing"),
        "empty": str(tmp_path / "empty"),
    }
    result = runner.invoke(app, [a.format(**subst) for a in args])
    assert result.exit_code == 2, result.output
    assert needle in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["show", "view"])
def test_help(command: str) -> None:
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0 and "LOGDIR" in result.output
