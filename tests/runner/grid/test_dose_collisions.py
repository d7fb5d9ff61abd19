"""``ladder validate`` refuses two doses of a grid that stress the same turns (issue #46;
runner.grid.doses): one line per pair, said in the grid's words."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from ladder.app import app
from runner.grid.expand import GridError, parse_grid

GRIDS = Path(__file__).resolve().parents[3] / "runner" / "grids"


def _problems(variants: list[dict[str, object]], generator: int = 6, seeds: str = "100-105") -> str:
    raw = {
        "run": {
            "seeds": seeds,
            "graphs": [{"steps": 15, "density": 0.3}],
            "variants": variants,
            "generator": generator,
        },
        "models": [{"name": "scripted/perfect"}],
    }
    try:
        parse_grid(raw)
    except GridError as e:
        return str(e)
    return ""


def _sweep(knob: str, value: str, *doses: float) -> list[dict[str, object]]:
    dose = "spoof_dose" if knob == "spoof" else "user_dose"
    return [{"arm": "raw", knob: value, dose: d} for d in doses]


def test_doses_that_ask_for_the_same_count_are_refused() -> None:
    got = _problems(_sweep("user_style", "restate", 0.1, 0.125))
    assert got == (
        'grid: user_style = "restate": user_dose 0.1 and 0.125 stress the same turns on '
        "every episode of the grid (both ask for 1 stress slots); keep one"
    )


def test_doses_whose_eligible_turns_run_out_are_refused() -> None:
    # the forged directive has two eligible turns per episode (the premature asks)
    got = _problems(_sweep("spoof", "directive", 0.25, 1.0))
    assert got.splitlines() == [
        'grid: spoof = "directive": spoof_dose 0.25 and 1 stress the same turns on every '
        "episode of the grid (the eligible turns run out); keep one"
    ]


def test_doses_that_differ_on_one_episode_pass() -> None:
    assert _problems(_sweep("user_style", "restate", 0.1, 0.25, 1.0)) == ""
    assert _problems(_sweep("spoof", "receipt", 0.1, 0.25, 1.0)) == ""
    # the default dose counts as one of the sweep
    got = _problems([{"arm": "raw", "spoof": "receipt"}, *_sweep("spoof", "receipt", 0.3)])
    assert "spoof_dose 0.25 and 0.3 stress the same turns" in got


def test_generator_5s_collapsed_doses_reproduce_their_runs() -> None:
    """The issue's measurement: under generator 5 doses 0.1 and 0.25 stress the identical
    restates on every seed; a grid pinned to generator 5 reproduces the runs made with it, so
    it is not refused (generator 6, the default, is)."""
    from protocol import EpisodeSpec, generate
    from protocol.stress.plan import stress_plan

    for seed in range(100, 106):
        ep = generate(EpisodeSpec(seed=seed, steps=15, density=0.3, generator=5))
        low = stress_plan(ep, user_style="restate", user_dose=0.1)
        assert low == stress_plan(ep, user_style="restate", user_dose=0.25)
    assert _problems(_sweep("user_style", "restate", 0.1, 0.25), generator=5) == ""
    assert "user_dose 0.1 and 0.25" not in _problems(_sweep("user_style", "restate", 0.1, 0.25))


def test_the_shipped_stress_grids_validate() -> None:
    for name in ("spoof.toml", "user-style.toml"):
        result = CliRunner().invoke(app, ["validate", "--offline", str(GRIDS / name)])
        assert result.exit_code == 0, result.output


def test_the_plain_restate_needs_generator_6() -> None:
    assert _problems([{"arm": "raw", "user_style": "restate_plain"}]) == ""
    got = _problems([{"arm": "raw", "user_style": "restate_plain"}], generator=5)
    assert got == 'grid: user_style = "restate_plain" needs generator 6 or later (the grid uses 5)'
    assert _problems([{"arm": "raw", "user_style": "double_plain"}]) == ""
    got = _problems([{"arm": "raw", "user_style": "double_plain"}], generator=5)
    assert got == 'grid: user_style = "double_plain" needs generator 6 or later (the grid uses 5)'
