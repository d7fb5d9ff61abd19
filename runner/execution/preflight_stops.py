"""Which cells a failed preflight stops (#47): a cell stops when any model it sends to failed
on the endpoint it sends there, whatever the role.

A cell's agent is its model on the model's endpoint; a compiling arm's compiler is the
model's ``compile_model`` (or the model itself) on that model's helper endpoint where it has
one; a gate's matcher is the cell's model on its helper endpoint. So a compile model that
does not answer stops the gates of every model it compiles for (their other arms run), a
helper endpoint that does not answer stops its model's gates, and an agent that does not
answer stops all its cells, as before. Pure: the preflight's answers in, the stops out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocol.arms.table import arm_spec
from runner.grid.expand import Grid, Task
from runner.grid.schema import ModelConfig

__all__ = ["helper_pings", "preflight_stops"]


def helper_pings(grid: Grid) -> list[tuple[ModelConfig, str]]:
    """The (model, endpoint) pairs the preflight checks beside each model's own endpoint:
    a model's helper endpoint, where it names one of its own."""
    return [
        (m, m.helper_endpoint)
        for m in grid.models
        if m.helper_endpoint is not None and m.helper_endpoint != m.endpoint
    ]


def _helper_failure(
    model: ModelConfig, failed: Mapping[str, str], helpers_failed: Mapping[str, str]
) -> str | None:
    """Why ``model`` cannot serve as a helper (compiler or matcher): its helper endpoint's
    preflight failed, or (no helper endpoint) its own; None when it answered."""
    if model.helper_endpoint is not None and model.helper_endpoint != model.endpoint:
        return helpers_failed.get(model.name)
    return failed.get(model.name)


def _why(grid: Grid, task: Task, failed: Mapping[str, str], helpers: Mapping[str, str]) -> str:
    """Why ``task`` cannot run ("" when it can): its agent, its compiler or its matcher."""
    model = grid.model(task.cell.model)
    if model.name in failed:
        return ""  # its agent: the model's own stop, reported by model
    spec = arm_spec(task.cell.arm)
    if spec is None:
        return ""
    if spec.compiles:
        compiler = grid.model(model.compile_model) if model.compile_model else model
        if (why := _helper_failure(compiler, failed, helpers)) is not None:
            what = f"compile model {compiler.name!r}" if model.compile_model else "helper endpoint"
            return f"preflight: {what}: {why}"
    if spec.matcher and (why := _helper_failure(model, failed, helpers)) is not None:
        return f"preflight: helper endpoint: {why}"
    return ""


def preflight_stops(
    grid: Grid,
    tasks: Sequence[Task],
    failed: Mapping[str, str],
    helpers_failed: Mapping[str, str],
) -> tuple[dict[str, str], list[Task]]:
    """``(stopped, runnable)``: what stopped (a model, or a model's arms that need a failed
    helper: ``"m (enforce, hybrid)"``) -> why, and the tasks that still run.
    ``failed``: models whose own endpoint failed; ``helpers_failed``: models whose helper
    endpoint failed."""
    stopped: dict[str, str] = {}
    helper_stops: dict[tuple[str, str], set[str]] = {}  # (model, why) -> its arms stopped
    runnable: list[Task] = []
    for task in tasks:
        if task.cell.model in failed:
            stopped.setdefault(task.cell.model, f"preflight: {failed[task.cell.model]}")
        elif why := _why(grid, task, failed, helpers_failed):
            helper_stops.setdefault((task.cell.model, why), set()).add(task.cell.arm)
        else:
            runnable.append(task)
    for (model, why), arms in helper_stops.items():
        stopped[f"{model} ({', '.join(sorted(arms))})"] = why
    return stopped, runnable
