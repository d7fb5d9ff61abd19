"""A helper model that fails its preflight stops the cells that need it (#47): a model's
``compile_model`` on a real loopback server that refuses it (a 404 at the preflight, or a
``/models`` list without it) stops that model's compiling arms, as a failed agent model
stops its cells: named in one ``error:`` line, exit 3; its other arms and the other models'
cells run to the end. A ``helper_endpoint`` that refuses stops its model's gates alike."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from ladder.app import app
from protocol.arms.table import arm_spec
from runner.execution.preflight_stops import preflight_stops
from runner.grid.expand import expand, load_grid
from tests.reliability_kit import records
from tests.runner.execution.test_preflight_isolation import (
    BROKEN,
    HEALTHY,
    _default_loop_policy,
    _grid,
    refusing_url,
)

__all__ = ["_default_loop_policy", "refusing_url"]  # fixtures, imported for their use here


def _run(grid: Path, out: Path) -> tuple[int, list[str], str]:
    result = CliRunner().invoke(app, ["run", str(grid), "--out", str(out), "--no-live"])
    assert "Traceback" not in result.output
    lines = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert all(len(x) <= 80 for x in lines), lines  # an error is wrapped at 80 columns (#49)
    error = " ".join(x.removeprefix("error:").strip() for x in lines)  # one error, read whole
    return result.exit_code, [error] if error else [], result.stdout


def test_a_failed_compile_model_stops_the_gates_it_compiles_for(
    tmp_path: Path, refusing_url: str
) -> None:
    models = [
        {"name": BROKEN, "endpoint": "far"},
        {"name": HEALTHY, "endpoint": "embedded", "compile_model": BROKEN},
    ]
    grid = _grid(tmp_path, refusing_url, models, arms=("raw", "enforce"))
    out = tmp_path / "run"
    code, errors, stdout = _run(grid, out)
    assert code == 3, (errors, stdout)
    text = " ".join(x.removeprefix("error:").strip() for x in errors)
    assert f"model '{BROKEN}' stopped: preflight: " in text
    assert f"model '{HEALTHY} (enforce)' stopped: preflight: compile model '{BROKEN}'" in text
    assert f"model '{HEALTHY} (enforce)' stopped at the preflight" in stdout
    recs = list(records(out).values())  # the healthy model's raw cell ran to the end
    assert {(r.cell.model, r.cell.arm) for r in recs} == {(HEALTHY, "raw")}
    assert len(recs) == 4 and all(r.termination == "completed" for r in recs)


def test_a_refusing_helper_endpoint_stops_its_models_gates(
    tmp_path: Path, refusing_url: str
) -> None:
    models = [{"name": HEALTHY, "endpoint": "embedded", "helper_endpoint": "far"}]
    grid = _grid(tmp_path, refusing_url, models, arms=("raw", "checklist", "enforce"))
    out = tmp_path / "run"
    code, errors, _ = _run(grid, out)
    if "404" not in " ".join(errors):  # the /models-only server answers the tiny request
        assert code == 0, errors
        return
    assert code == 3, errors
    assert f"model '{HEALTHY} (enforce)' stopped: preflight: helper endpoint: " in errors[0]
    arms = {r.cell.arm for r in records(out).values()}
    assert arms == {"raw", "checklist"}  # no gate, no helper: they ran


def test_only_the_cells_that_send_to_the_failed_model_stop(tmp_path: Path) -> None:
    """The rule itself, arm by arm: the compiling arms of the model compiled for, every cell
    of the failed model, nothing else."""
    models = [
        {"name": BROKEN, "endpoint": "far"},
        {"name": HEALTHY, "endpoint": "embedded", "compile_model": BROKEN},
        {"name": "scripted/synthetic", "endpoint": "embedded"},
    ]
    arms = ("raw", "checklist", "directive", "enforce")
    grid = load_grid(_grid(tmp_path, "http://127.0.0.1:9/v1", models, arms=arms))
    tasks = list(expand(grid))
    assert len(tasks) == 3 * 4 * 4  # models x arms x seeds
    stopped, left = preflight_stops(grid, tasks, {BROKEN: "down"}, {})
    compiling = sorted(a for a in arms if (s := arm_spec(a)) is not None and s.compiles)
    assert stopped == {
        BROKEN: "preflight: down",
        f"{HEALTHY} ({', '.join(compiling)})": f"preflight: compile model '{BROKEN}': down",
    }
    assert {(t.cell.model, t.cell.arm) for t in left} == {
        *((HEALTHY, a) for a in arms if a not in compiling),
        *(("scripted/synthetic", a) for a in arms),
    }
    assert preflight_stops(grid, tasks, {}, {}) == ({}, tasks)
