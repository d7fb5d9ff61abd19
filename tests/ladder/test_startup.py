"""The command line starts at once (#49 item 6, #50): ``import ladder.app`` imports no
command's module nor any heavy dependency; ``ladder -h`` lists every command from the lazy
table (:data:`ladder.app.COMMANDS`) exactly as the loaded commands would; a typo'd command is
one line with a suggestion before anything else loads. Timings are in
``bench/bench_startup.py``, never here."""

from __future__ import annotations

import pytest
import typer
import typer.main
from typer.core import TyperGroup
from typer.testing import CliRunner

from ladder.app import COMMANDS, app, load_command, short_help
from tests.fresh_imports import imported_after, of_packages

# what a command may import once it runs, never before
HEAVY = (
    "aiohttp",
    "openai",
    "msgspec",
    "matplotlib",
    "scipy",
    "duckdb",
    "rich",
    "numpy",
    "pydantic",
    "asyncio",
    "anyio",
    "importlib.metadata",
    "protocol",
    "scoring",
    "serve",
    "tau2gate",
    "runner.client",
    "runner.rundir.records",
    "runner.rundir.logs",
    "runner.plugins",
)


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


@pytest.mark.process
def test_import_ladder_app_imports_no_command_and_no_heavy_dependency() -> None:
    modules = imported_after("import ladder.app")
    assert _heavy(modules) == []
    commands = {f"ladder.{n}" for n in COMMANDS} | {"serve.cli", "ladder.domain"}
    assert commands.isdisjoint(modules)


@pytest.mark.process
@pytest.mark.parametrize("args", [["--version"], ["-h"], ["bogus"], ["--bogus"], []])
def test_version_help_and_a_root_error_load_no_command(args: list[str]) -> None:
    code = (
        "import sys\nfrom ladder.app import main\n"
        f"sys.argv = ['ladder', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    modules = imported_after(code)
    # --version reads the installed version (importlib.metadata), and only it
    assert _heavy([m for m in modules if not m.startswith("importlib.metadata")]) == []
    light = ("ladder.app", "ladder.early", "ladder.errors")  # ladder.early: stdlib checks only
    assert not any(m.startswith("ladder.") and m not in light for m in modules), modules


def test_the_help_lines_are_the_commands_own() -> None:
    for name, lazy in COMMANDS.items():
        command = load_command(name)
        if lazy.group:
            assert command.help == lazy.help, name
        else:
            assert command.callback is not None
            assert lazy.help == short_help(command.callback) == command.short_help, (
                f"{name}: COMMANDS[{name!r}].help in ladder/app.py must be the first sentence "
                "of the command's docstring"
            )


def test_ladder_h_is_the_same_before_and_after_every_command_loads() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)

    def listing() -> str:
        return group.get_help(typer.Context(group, info_name="ladder", terminal_width=100))

    lazy = listing()
    assert not group.commands  # the listing loaded nothing
    for name in COMMANDS:
        assert group.get_command(typer.Context(group), name) is not None
    assert set(group.commands) == set(COMMANDS)
    assert listing() == lazy
    assert all(f"\n  {name} " in lazy for name in COMMANDS)


def test_a_typod_command_gets_one_line_with_the_nearest_command() -> None:
    result = CliRunner().invoke(app, ["scor"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: No such command 'scor'. Did you mean 'score'?"
    sub = CliRunner().invoke(app, ["serve", "scriptd"])
    assert sub.exit_code == 2 and "Did you mean 'scripted'?" in sub.stderr


# plainly bad input that each command refuses in one line (ladder.early), before it loads
BAD = [
    ["score", "/nonexistent-ladder-test"],
    ["score", "/nonexistent-ladder-test", "--episodes"],
    ["report", "/nonexistent-ladder-test"],
    ["show", "/nonexistent-ladder-test"],
    ["cost", "/nonexistent-ladder-test"],
    ["validate", "/nonexistent-ladder-test.toml"],
    ["run", "--trials", "0"],
    ["run", "--trials=-3"],
    ["run", "--trials", "5", "--trials", "0"],
    ["score", "x" * 5000],  # a name too long to look up: still one line
    ["cost", "x" * 5000],
    ["view", "x" * 5000],
    ["show", "x" * 5000, "--limit", "2"],
    ["view", "/nonexistent-ladder-test"],
    ["generate", "--steps", "99"],
    ["generate", "-S", "4", "--seed", "7"],
    ["generate", "--steps=19", "--json"],
]
ENDPOINT_AND_PLOTS = ("aiohttp", "numpy", "scipy", "matplotlib")


@pytest.mark.process
@pytest.mark.parametrize("args", [BAD[0], BAD[6], BAD[14]])
def test_a_bad_path_or_trials_0_loads_no_endpoint_numbers_or_plots(args: list[str]) -> None:
    code = (
        "import sys\nfrom ladder.app import main\n"
        f"sys.argv = ['ladder', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert e.code == 2, e.code"
    )
    modules = imported_after(code)
    loaded = of_packages(modules, *ENDPOINT_AND_PLOTS)
    assert loaded == [], loaded
    assert f"ladder.{args[0]}" not in modules  # refused before the command loaded
    assert "runner.plugins" not in modules


@pytest.mark.parametrize("args", BAD)
def test_the_early_line_is_the_commands_own(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    early = CliRunner().invoke(app, args)
    monkeypatch.setattr("ladder.app.early_check", lambda command, rest: None)
    loaded = CliRunner().invoke(app, args)
    assert early.exit_code == loaded.exit_code == 2
    assert early.stderr.startswith("error: ") and early.stderr.count("\n") == 1
    assert early.stderr == loaded.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["score", "-h", "/nonexistent-ladder-test"],
        ["score", "--help"],
        ["run", "--trials", "two"],
        ["run", "--trials", "3", "--", "--trials"],
    ],
)
def test_what_the_early_checks_cannot_tell_is_left_to_the_command(args: list[str]) -> None:
    from ladder.early import early_check

    early_check(args[0], args[1:])  # raises nothing: the command decides


@pytest.mark.parametrize(
    ("args", "loads"),
    [
        (["generate", "--seeds", "1"], False),
        (["serve", "recipes"], False),
        (["cost", "{dir}"], True),
        (["score", "{dir}"], True),
    ],
)
def test_plugins_load_only_for_a_command_that_reads_a_registry(
    args: list[str], loads: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    calls: list[bool] = []

    def load_plugins() -> list[str]:
        calls.append(True)
        return []

    monkeypatch.setattr("runner.plugins.load_plugins", load_plugins)
    CliRunner().invoke(app, [a.format(dir=tmp_path) for a in args])
    assert bool(calls) is loads
    assert COMMANDS[args[0]].plugins is loads


def test_an_early_line_may_come_before_the_commands_other_problems(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Precedence is the early checks' one difference (docs/cli.md): the early line is a true
    problem of the input, which the loaded command reports too, beside another."""
    args = ["run", "--trials", "0", "--concurrency", "0"]
    early = CliRunner().invoke(app, args)
    monkeypatch.setattr("ladder.app.early_check", lambda command, rest: None)
    loaded = CliRunner().invoke(app, args)
    assert early.exit_code == loaded.exit_code == 2
    assert early.stderr == "error: command line: trials must be at least 1 (got 0)\n"
    assert "concurrency must be at least 1" in loaded.stderr
    assert "trials must be at least 1 (got 0)" in loaded.stderr


def test_the_early_step_bounds_are_the_generators() -> None:
    from ladder import early
    from protocol.episode.versions import MAX_STEPS, MIN_STEPS

    assert (early._MIN_STEPS, early._MAX_STEPS) == (MIN_STEPS, MAX_STEPS)
    early.early_check("generate", ["--steps", str(MIN_STEPS)])  # in bounds: left alone
    early.early_check("generate", ["-S", str(MAX_STEPS)])
