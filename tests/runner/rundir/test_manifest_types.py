"""A manifest of valid JSON with wrong types (#47) is one line naming the field in `score`,
`report`, `show`, `cost` and a resume, never a TypeError or AttributeError traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app
from runner.grid.expand import parse_grid
from runner.rundir.manifest import MANIFEST, ManifestError, write_or_check_manifest
from tests.view_run import grid_data, make_run

WRONG = {
    "$.grid.models[0].name": lambda m: m["grid"]["models"][0].__setitem__("name", ["x"]),
    "$.resumed": lambda m: m.__setitem__("resumed", 5),
    "$.grid.run": lambda m: m["grid"].__setitem__("run", 5),
    "$.grid.models": lambda m: m["grid"].__setitem__("models", 5),
    "$.history": lambda m: m.__setitem__("history", {"a": 1}),
}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("run") / "run", seeds="100", arms=["raw"])


@pytest.mark.parametrize("field", list(WRONG))
def test_a_wrong_type_is_one_line_naming_the_field(base: Path, tmp_path: Path, field: str) -> None:
    run = tmp_path / "run"
    shutil.copytree(base, run)
    data = json.loads((run / MANIFEST).read_text())
    WRONG[field](data)
    (run / MANIFEST).write_text(json.dumps(data))
    for command in ("score", "report", "show", "cost"):
        result = CliRunner().invoke(app, [command, str(run)])
        assert result.exit_code == 2, (command, result.output)
        (line,) = result.output.strip().splitlines()
        assert field in line and MANIFEST in line, (command, line)
    grid = parse_grid(grid_data("100", arms=["raw"]))
    with pytest.raises(ManifestError, match=field.replace("$", r"\$").replace("[", r"\[")):
        write_or_check_manifest(run, grid)  # a resume


def test_a_well_typed_manifest_reads_as_before(base: Path) -> None:
    result = CliRunner().invoke(app, ["score", str(base)])
    assert result.exit_code == 0, result.output
