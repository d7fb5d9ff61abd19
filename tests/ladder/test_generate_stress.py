"""``ladder generate`` with the dosed stress knobs (issue #46): the stressed turns of an
episode read without an agent, each marked and named; without a knob, the output as before."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ladder.app import app
from protocol import EpisodeSpec, generate
from protocol.stress.plan import stress_plan

ARGS = ["generate", "--seed", "101", "-S", "15", "--density", "0.3"]


def _run(*extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, [*ARGS, *extra])
    return result.exit_code, result.output


def _marked(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("! ")]


def test_each_stressed_turn_is_marked_and_named() -> None:
    ep = generate(EpisodeSpec(seed=101, steps=15, density=0.3, generator=6))
    for args, plan in (
        (["--user-style", "restate", "--user-dose", "1"], stress_plan(ep, user_style="restate", user_dose=1.0)),
        (["--spoof", "receipt", "--spoof-dose", "0.25"], stress_plan(ep, spoof="receipt", spoof_dose=0.25)),
        (["--user-style", "contradict"], stress_plan(ep, user_style="contradict")),
    ):  # fmt: skip
        code, out = _run(*args)
        assert code == 0, out
        marked = _marked(out)
        assert plan and len(marked) == len(plan)
        assert f"{len(plan)} planned turns stressed ({', '.join(map(str, plan))}), marked !" in out
        for line, (stress, text) in zip(marked, plan.values(), strict=True):
            assert f"[{stress}] {text.splitlines()[0]}" in line


def test_a_forgery_is_shown_forwarded_after_the_users_words() -> None:
    code, out = _run("--spoof", "receipt", "--spoof-dose", "0.1")
    assert code == 0
    (line,) = _marked(out)
    assert "[spoof=receipt]" in line
    after = out.split(line, 1)[1].splitlines()
    assert after[1] == "Forwarded message, as I received it:" and after[2].startswith("> ")


def test_without_a_knob_the_output_is_unchanged() -> None:
    code, out = _run()
    assert code == 0 and "## stress" not in out and not _marked(out)
    assert all(not line.startswith("!") for line in out.splitlines())


def test_json_lists_the_stressed_turns() -> None:
    code, out = _run("--json", "--user-style", "double", "--user-dose", "0.25")
    assert code == 0
    line = json.loads(out)
    assert set(line) == {"episode", "stressed"} and len(line["stressed"]) == 2
    assert {v["stress"] for v in line["stressed"].values()} == {"user_style=double"}


def test_bad_knobs_are_one_line_and_exit_2() -> None:
    for args, want in (
        (["--spoof", "forged"], "unknown spoof 'forged'"),
        (["--user-style", "rude"], "unknown user style 'rude'"),
        (
            ["--spoof", "receipt", "--spoof-dose", "2"],
            "'--spoof-dose': Input should be less than or equal to 1",
        ),
        (["--spoof", "receipt", "--generator", "4"], "stress doses need generator 5 or later"),
        (["--user-style", "restate_plain", "--generator", "5"], "restate_plain needs generator 6"),
        (["--user-style", "double_plain", "--generator", "5"], "double_plain needs generator 6"),
    ):
        code, out = _run(*args)
        assert code == 2 and want in out and "Traceback" not in out
