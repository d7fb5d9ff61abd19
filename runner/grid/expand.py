"""The grid file (TOML) and its expansion into cells and ladders.

A grid names endpoints, models (with their regime and how it is selected), the arms, graph
sizes and densities, domains, briefs, a seed range, variant knobs and decoding. Each
(model, graph, domain, brief, arm, knobs) is a cell; the arms of one configuration on shared
seeds form a ladder. Defaults are the paper's (Appendix B.4): temperature 0, reply budgets
400 / 2,500 tokens, matcher 200 / 2,500, compiler 3,000 / 6,000, timeout 900 s, six attempts.

Here: loading a grid file and expanding it into tasks. The grid itself is
:class:`runner.grid.cells.Grid` and its checks are :mod:`runner.grid.checks`; this module
re-exports what its importers take from it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection, Iterator
from pathlib import Path

import msgspec

from protocol.config import Config
from protocol.domains.packs import PackError
from protocol.nesting import toml_loads
from protocol.records import CellKey, EpisodeSpec, trial_slug
from runner.files import read_regular
from runner.grid.cells import Grid
from runner.grid.checks import MAX_EPISODES, MAX_LISTED, check_grid, key_problem, missing_keys
from runner.grid.errors import GridError, validation_problem
from runner.grid.packs import resolve_domains
from runner.grid.schema import GridData

__all__ = [
    "MAX_EPISODES",
    "MAX_GRID_BYTES",
    "MAX_LISTED",
    "Grid",
    "GridError",
    "Task",
    "check_grid",
    "expand",
    "key_problem",
    "load_grid",
    "missing_keys",
    "parse_grid",
    "trial_warnings",
]


class Task(msgspec.Struct, frozen=True, kw_only=True):
    """One episode to run: a cell, a seed and which trial of it (``run.trials``)."""

    cell: CellKey
    spec: EpisodeSpec
    trial: int = 0

    def key(self) -> tuple[str, int]:
        """The key its record is logged under (:func:`protocol.records.log_key`)."""
        return (trial_slug(self.cell.slug(), self.trial), self.spec.seed)


def expand(grid: Grid, cells: Collection[CellKey] | None = None) -> Iterator[Task]:
    """Tasks in run order: configuration by configuration (so cells finish one after another
    and results stream), seed by seed, trial by trial (``run.trials``), with the arms of one
    seed and trial adjacent (shared helper results, warm prefix caches). Lazy: one task at a
    time, so a run of 250,000 episodes never lists them (#47). ``cells``: only those."""
    configs: dict[tuple[str, str, Config], list[CellKey]] = {}
    for c in grid.cells():
        if cells is None or c in cells:
            configs.setdefault((c.model, c.regime, c.config), []).append(c)
    seeds = grid.seeds() if configs else []
    for group in configs.values():
        for seed in seeds:
            for trial in range(grid.run.trials):
                for cell in group:
                    spec = cell.spec(seed, grid.run.generator)
                    yield Task(cell=cell, spec=spec, trial=trial)


# OURS (#47): shipped grids are under 5 KB; TOML parsing is pure Python (a 64 MiB grid took
# minutes and gigabytes), so a grid file is refused past 1 MiB
MAX_GRID_BYTES = 1 << 20


def trial_warnings(grid: Grid) -> list[str]:
    """Why ``run.trials`` may not do what it is for: repeated trials at temperature 0 on a
    deterministic server give the same reply K times (#40)."""
    if grid.run.trials > 1 and grid.decoding.temperature == 0:
        return [
            f"warning: {grid.run.trials} trials per seed at temperature 0: a deterministic "
            "server replies the same in every trial (pass^k then equals the success rate); "
            "set --temperature (docs/trials.md)"
        ]
    return []


# --- loading and validation --------------------------------------------------------


def parse_grid(
    data: GridData, *, source: str = "grid", need_keys: bool = True, base: Path | None = None
) -> Grid:
    """The grid of ``data``, checked (:func:`check_grid`); ``need_keys=False`` leaves out
    the check that each endpoint's API-key variable is set (see :func:`missing_keys`). Pack
    files among its domains (relative to ``base``, the grid file's folder, else the working
    directory) are loaded and named by their pack."""
    data = _seeds_as_text(data)
    run = data.get("run")
    if isinstance(run, dict) and isinstance(run.get("domains"), list):
        try:
            names = resolve_domains([str(d) for d in run["domains"]], base)
        except PackError as e:
            raise GridError("\n".join(e.problems)) from None
        data = {**data, "run": {**run, "domains": names}}
    try:
        grid = msgspec.convert(data, Grid)
    except msgspec.ValidationError as e:
        raise GridError(f"{source}: {validation_problem(Grid, str(e))}") from None
    check_grid(grid, source=source, need_keys=need_keys)
    return grid


def _seeds_as_text(data: GridData) -> GridData:
    """``seeds = 100`` (one seed, an integer in TOML) read as ``seeds = "100"``."""
    run = data.get("run")
    if isinstance(run, dict) and type(run.get("seeds")) is int:
        return {**data, "run": {**run, "seeds": str(run["seeds"])}}
    return data


def load_grid(path: Path, *, need_keys: bool = True) -> Grid:
    try:
        data = toml_loads(read_regular(path, cap=MAX_GRID_BYTES).decode("utf-8"))
    except OSError as e:
        raise GridError(f"cannot read grid {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise GridError(f"cannot read grid {path}: not a UTF-8 text file") from None
    except tomllib.TOMLDecodeError as e:
        raise GridError(f"{path}: malformed TOML: {e}") from None
    return parse_grid(data, source=str(path), need_keys=need_keys, base=path.parent)
