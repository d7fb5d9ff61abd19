"""Every number the command line takes has a ceiling (#47), so a new option cannot slip
through: the walk loads every command (subcommands of a group too) and asks each int or
float option for its ceiling, which is one of

- its typer ``max`` (click's range check: one ``error:`` line, exit 2);
- for ``ladder run``'s grid flags (``ladder.flags.FlagSpec.target``), the grid field's
  ceiling (``runner.grid.ceilings.ceiling_of``, checked at validation), or the flag's own
  ``FlagSpec.ceiling``;
- the command's own range check, listed below with its line (a test elsewhere pins each).

Then a few huge values are driven to one line, exit 2, no traceback."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ladder.app import COMMANDS, app, load_command
from ladder.flags import flag_name, flag_specs
from runner.grid.ceilings import ceiling_of

RUN = ["run", "--model", "scripted/perfect", "--arms", "raw", "--seeds", "100", "--steps", "5",
       "--out", "{tmp}/run", "--no-live"]  # fmt: skip

# (command, option) -> the command's own check that bounds it above (its line)
OWN_CHECK: dict[tuple[str, str], str] = {
    ("view", "--port"): "--port must be in 0..65535 (tests/ladder/test_view_cli.py)",
    ("serve scripted", "--port"): "--port must be in 0..65535 (tests/ladder/test_bad_input.py)",
    ("generate", "--steps"): "steps must be between 5 and 18 (ladder.early, check_spec)",
}


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def _walk(command: Any, path: str) -> Iterator[tuple[str, Any]]:
    for name, sub in getattr(command, "commands", {}).items():
        yield from _walk(sub, f"{path} {name}")
    for param in command.params:
        yield path, param


def numeric_options() -> list[tuple[str, str, Any]]:
    """(command, option, parameter) of every int or float option of every command."""
    out = []
    for name in COMMANDS:
        for path, param in _walk(load_command(name), name):
            if param.bare_type() in ("int", "float"):
                out.append((path, param.opts[0], param))
    return out


def _run_flag_ceiling(option: str) -> object:
    specs = {flag_name(n): s for n, s in flag_specs().items()}
    spec = specs.get(option)
    if spec is None:
        return None
    if spec.ceiling is not None:
        return spec.ceiling
    if spec.target is None:
        return None
    pattern = spec.target + (".*" if spec.target.endswith("_budget") else "")
    return ceiling_of(pattern)


def ceiling(command: str, option: str, param: Any) -> object:
    if param.max is not None:
        return param.max
    if command == "run" and (found := _run_flag_ceiling(option)) is not None:
        return found
    return OWN_CHECK.get((command, option))


OPTIONS = numeric_options()


def test_the_walk_sees_the_options_it_must() -> None:
    seen = {(c, o) for c, o, _ in OPTIONS}
    assert {("run", "--concurrency"), ("serve scripted", "--port"), ("generate", "--seed")} <= seen
    assert {("validate", "--rate"), ("run", "--max-tokens"), ("run", "--fault-hang")} <= seen


def test_every_numeric_option_has_a_ceiling() -> None:
    assert [f"{c} {o}" for c, o, p in OPTIONS if ceiling(c, o, p) is None] == []


def test_every_own_check_listed_is_an_option() -> None:
    assert set(OWN_CHECK) <= {(c, o) for c, o, _ in OPTIONS}


HUGE = "99999999999999999999"
RUN = [*RUN, "--arms", "raw", "--seeds", "100", "--steps", "5"]


@pytest.mark.parametrize(
    "argv",
    [
        [*RUN, "--concurrency", HUGE],
        [*RUN, "--limit", HUGE],
        [*RUN, "--max-in-flight", HUGE],
        [*RUN, "--breaker-after", HUGE],
        [*RUN, "--fault-hang", "1e300"],
        ["generate", "--seed", HUGE],
        ["generate", "--density", "1e300"],
        ["validate", "--rate", "1e300", "{tmp}/grid.toml"],
        ["show", "{tmp}", "--seed", HUGE],
        ["probe", "{tmp}", "--samples", HUGE],
        ["paraphrase", "--model", "m", "--out", "{tmp}/o.json", "--max-in-flight", HUGE],
        ["serve", "scripted", "--replicas", HUGE],
        ["serve", "vllm", "qwen3-8b", "--wait-s", "1e300"],
    ],
)
def test_a_huge_value_is_one_line(argv: list[str], tmp_path: Path) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    value = next(a for a in argv if a in (HUGE, "1e300"))
    named = argv[argv.index(value) - 1].lstrip("-")  # the option, or the grid field it sets
    assert line.startswith("error: "), line
    assert named in line or named.replace("-", "_") in line or named.replace("-", " ") in line
