"""Every error line of the typical mistakes fits 80 columns with its ``error:`` prefix
(#49, item 4), and a typo'd scripted policy is answered with the policies there are."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app
from serve.endpoint.models import ModelNotFound, parse_model


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


RUN = ["run", "--model", "scripted/perfect", "--steps", "5", "--seeds", "100", "--no-live"]

MISTAKES: list[tuple[list[str], str]] = [
    ([*RUN, "--arms", "rwa"], "did you mean 'raw'"),
    ([*RUN, "--seeds", "110-100"], "seed range"),
    (["run", "nothere.toml"], "nothere.toml"),
    (["validate", "nothere.toml"], "nothere.toml"),
    ([*RUN, "--base-url", "localhost:8000"], "http://localhost:8000?"),
    (["run", "--model", "m", "--base-url", "http://127.0.0.1:9", "--seeds", "100"], "connection"),
    ([*RUN, "--trials", "0"], "trials"),
    ([*RUN, "--temperature", "-1"], "temperature"),
    ([*RUN, "--top-p", "2"], "top_p"),
    ([*RUN, "--steps", "99"], "steps"),
    ([*RUN, "--density", "3"], "density"),
    ([*RUN, "--domians", "x"], "--domians"),
    (["score", "nothere"], "nothere"),
]


@pytest.mark.parametrize(("args", "needle"), MISTAKES, ids=[" ".join(a[-2:]) for a, _ in MISTAKES])
def test_each_error_line_fits_80_columns(args: list[str], needle: str, tmp_path: Path) -> None:
    if args[0] == "run" and "--out" not in args and len(args) > 2:
        args = [*args, "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert lines and all(x.startswith("error: ") and len(x) <= 80 for x in lines), lines
    assert needle in result.stderr


def test_a_file_given_as_out_fits(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    result = CliRunner().invoke(app, [*RUN, "--out", str(tmp_path / "f")])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: --out ") and "not a directory" in line


def test_a_typod_scripted_policy_lists_the_policies() -> None:
    with pytest.raises(ModelNotFound) as info:
        parse_model("scripted/perfct")
    text = str(info.value)
    assert "(did you mean scripted/perfect?)" in text
    assert text.startswith("The model `scripted/perfct` does not exist (did you mean")
    assert "scripted policies: always-book, embed, perfect, prerequisites, synthetic" in text
    with pytest.raises(ModelNotFound, match=r"The model `gpt` does not exist\."):
        parse_model("gpt")


def test_a_typod_scripted_policy_on_the_command_line_fits(tmp_path: Path) -> None:
    """The server's 404 with the policies there are (a 212-column line before) wraps, every
    line with its prefix (#49, item 4)."""
    args = ["run", "--model", "scripted/perfct", "--arms", "raw", "--steps", "5"]
    result = CliRunner().invoke(app, [*args, "--seeds", "100", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) > 1 and all(x.startswith("error: ") and len(x) <= 80 for x in lines)
    assert lines[1].startswith("error:   ")  # a continuation, indented under the prefix
    text = " ".join(x.removeprefix("error: ").strip() for x in lines)
    assert "did you mean scripted/perfect?" in text and "prerequisites, synthetic" in text


def test_a_preflight_problem_wraps_under_its_prefix() -> None:
    from runner.execution.connect import problem_lines

    long = "m at http://127.0.0.1:8000/v1: HTTP 404: " + " ".join(["word"] * 30)
    lines = problem_lines(long)
    assert len(lines) > 1 and all(len(f"error: {x}") <= 80 for x in lines)
    assert all(x.startswith("  word") for x in lines[1:])
    path = "http://" + "h" * 120  # a word wider than the line stays whole
    assert problem_lines(f"at {path}") == ["at", f"  {path}"]
