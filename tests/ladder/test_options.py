"""One bundle of scripted-endpoint options for run, demo and serve scripted; one
max_in_flight default; grid values outside a Literal refused with their choices (#26)."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from ladder.app import app
from ladder.flags import RunFlags, embedded_server, grid_from_flags
from runner.grid.expand import GridError, parse_grid
from runner.grid.schema import DEFAULT_MAX_IN_FLIGHT, EndpointConfig
from serve.options import ScriptedFlags, scripted_options

runner = CliRunner()
BUNDLE = ("--latency", "--latency-s", "--fault-503", "--fault-empty-thinking", "--fault-seed")


@pytest.mark.parametrize("command", [["run"], ["demo"], ["serve", "scripted"]])
def test_run_demo_and_serve_take_the_same_options(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "-h"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert all(option in result.output for option in BUNDLE), result.output


def _read(*args: str) -> ScriptedFlags:
    seen: list[ScriptedFlags] = []

    @scripted_options
    def command(*, scripted: ScriptedFlags) -> None:
        seen.append(scripted)

    toy = typer.Typer()
    toy.command()(command)
    result = runner.invoke(toy, list(args))
    assert result.exit_code == 0, result.output
    return seen[0]


def test_both_fault_spellings_give_one_config() -> None:
    new = _read("--fault-503", "0.2", "--fault-hang", "0.1", "--fault-seed", "7")
    old = _read("--fault", "503=0.2", "--fault", "hang=0.1", "--fault-seed", "7")
    assert new.fault_config() == old.fault_config()
    assert new.fault_config().rate_503 == 0.2 and new.fault_config().rate_hang == 0.1
    assert not _read().given() and new.given()


def test_the_fault_seed_reaches_the_embedded_endpoint() -> None:
    grid, _ = grid_from_flags(RunFlags(), env={})
    assert embedded_server(grid, ScriptedFlags()) is None
    server = embedded_server(grid, ScriptedFlags(rates={"503": 0.2}, fault_seed=7))
    assert server is not None and server.seed == 7 and server.faults.rate_503 == 0.2
    fixed = embedded_server(grid, ScriptedFlags(latency_s=0.5))
    assert fixed is not None and (fixed.latency.mode, fixed.latency.seconds) == ("fixed", 0.5)


def test_one_max_in_flight_default() -> None:
    grid, _ = grid_from_flags(RunFlags(), env={})
    assert grid.endpoints[0].max_in_flight == DEFAULT_MAX_IN_FLIGHT == 64
    assert EndpointConfig(name="e").max_in_flight == DEFAULT_MAX_IN_FLIGHT
    assert grid.endpoint("embedded").max_in_flight == DEFAULT_MAX_IN_FLIGHT


@pytest.mark.parametrize(
    ("run", "needle"),
    [
        (
            {"domains": ["finanse"]},
            "[run] domains: unknown value 'finanse'; choose from procurement",
        ),
        ({"briefs": ["amend"]}, "unknown value 'amend' (did you mean 'amended'?)"),
        ({"schedules": ["later"]}, "choose from earlier, regenerated"),
    ],
)
def test_a_value_outside_its_literal_is_refused_with_the_choices(
    run: dict[str, object], needle: str
) -> None:
    data = {"run": {"seeds": "100", **run}, "models": [{"name": "scripted/perfect"}]}
    with pytest.raises(GridError) as e:
        parse_grid(data, source="g.toml")
    assert needle in str(e.value) and str(e.value).startswith("g.toml: ")
