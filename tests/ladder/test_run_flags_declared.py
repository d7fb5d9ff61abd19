"""``ladder run``'s named flags are declared once (issue #35): each :class:`RunFlags` field
with its :class:`FlagSpec` is the typer option, the override record and the grid change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ladder.app import app
from ladder.flags import RunFlags, apply_flags, flag_name, flag_specs, grid_from_flags
from runner.grid.expand import load_grid

GRIDS = Path(__file__).resolve().parents[2] / "runner" / "grids"
PACK = Path(__file__).resolve().parents[2] / "protocol" / "domains" / "builtin" / "release.toml"

# a value of each flag with a grid target, and where the grid shows it
SAMPLES: dict[str, tuple[Any, str, object]] = {  # a value as typer hands it (Any)
    "arms": ("raw,enforce", "run.arms", ["raw", "enforce"]),
    "steps": ("5,15", "run.steps", [5, 15]),
    "density": ("0.3", "run.density", [0.3]),
    "seeds": ("7-9", "run.seeds", "7-9"),
    "domain": ("release", "run.domains", ["release"]),
    "domain_file": ([PACK], "run.domains", ["release"]),  # a pack file is read to its slug
    "brief": ("original", "run.briefs", ["original"]),
    "concurrency": (8, "run.concurrency", 8),
    "served": ("scripted/synthetic", "models.0.served", "scripted/synthetic"),
    "regime": ("thinking", "models.0.regime", "thinking"),
    "select": ("request", "models.0.select", "request"),
    "extra": (['k="v"'], "models.0.extra", {"k": "v"}),
    "temperature": (0.5, "decoding.temperature", 0.5),
    "top_p": (0.9, "decoding.top_p", 0.9),
    "max_tokens": (300, "decoding.reply_budget", {"no-think": 300, "thinking": 300}),
    "trials": (3, "run.trials", 3),  # repeated trials (#40)
}


def _at(grid: object, path: str) -> object:
    node = grid
    for key in path.split("."):
        node = node[int(key)] if isinstance(node, list) else getattr(node, key)
    return node


def test_every_flag_with_a_target_has_a_sample_here() -> None:
    targeted = {name for name, spec in flag_specs().items() if spec.target}
    assert targeted == set(SAMPLES)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_flag_sets_its_target_on_a_flag_built_grid_and_on_a_grid_file(name: str) -> None:
    value, path, expected = SAMPLES[name]
    flags = RunFlags(**{name: value})
    built, _ = grid_from_flags(flags, env={})
    assert _at(built, path) == expected
    filed, given = apply_flags(load_grid(GRIDS / "demo.toml"), flags, source="demo.toml")
    assert _at(filed, path) == expected
    assert flag_name(name) in given


def test_each_flag_is_an_option_of_run_with_its_help() -> None:
    result = CliRunner().invoke(app, ["run", "-h"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    text = "".join(result.output.split())  # the help wraps, at spaces and hyphens
    for name, spec in flag_specs().items():
        assert flag_name(name) in text
        assert "".join(spec.help_text().split()) in text


def test_a_flag_built_grid_takes_each_declared_default() -> None:
    grid, _ = grid_from_flags(RunFlags(), env={})
    assert grid.run.seeds == flag_specs()["seeds"].built == "100-131"
    assert ",".join(grid.run.arms) == flag_specs()["arms"].built
    assert grid.run.concurrency == 256 and grid.models[0].name == "scripted/perfect"


def test_a_domain_file_adds_to_the_domains_given_else_is_the_only_one() -> None:
    both, _ = grid_from_flags(RunFlags(domain="procurement", domain_file=[PACK]), env={})
    assert both.run.domains == ["procurement", "release"]
    grid = load_grid(GRIDS / "demo.toml")
    alone, given = apply_flags(grid, RunFlags(domain_file=[PACK]), source="demo.toml")
    assert alone.run.domains == ["release"] and given == {"--domain-file": [str(PACK)]}
