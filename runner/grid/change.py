"""Comparing the grid a run directory holds with the grid of a new command.

A strict superset (more seeds, more arms or variants, more configurations: models, graphs,
domains, briefs; more trials per seed) is compatible: every episode already logged is one of the new grid's, so
the run resumes and only the added episodes run. Every other change would mix two grids'
episodes in one directory and is refused with a readable diff of the two grids.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec
import orjson

from protocol.config import graph_label
from protocol.records import CellKey
from runner.grid.expand import Grid
from runner.grid.schema import GridData
from runner.grid.seeds import format_seeds

__all__ = ["GridChange", "compare_grids", "episodes_part", "identity"]

# Not part of a grid's identity: how fast it runs, and where its servers are.
_RUN_FREE = ("concurrency",)
_ENDPOINT_FREE = ("max_in_flight", "adaptive", "start_in_flight", "base_url", "base_urls")
# The dimensions a compatible change may grow.
_GROWABLE = (
    "seeds", "arms", "variants", "steps", "density", "graphs", "domains", "briefs", "trials",
)  # fmt: skip


def episodes_part(grid_data: GridData) -> GridData:
    """A deep copy of a grid's builtins without what no episode depends on: how fast it runs
    (``concurrency``, the endpoints' caps), where its servers are (their URLs, the helpers'
    endpoint and llama.cpp slots), and a model's ``brief_role`` at its default (grids written
    before #41 omit it). The one list of these: :func:`identity` (comparing grids) and
    :func:`runner.rundir.manifest.grid_digest` (a run's digest) both start from it."""
    data = orjson.loads(orjson.dumps(grid_data))  # a deep copy
    run = data.get("run", {})
    for k in _RUN_FREE:
        run.pop(k, None)
    for v in run.get("variants", []):  # every model runs it: as grids before `models` (#48)
        if not v.get("models"):
            v.pop("models", None)
    for e in data.get("endpoints", []):
        for k in _ENDPOINT_FREE:
            e.pop(k, None)
    for m in data.get("models", []):
        if m.get("brief_role") == "system":
            m.pop("brief_role")
        for k in ("helper_endpoint", "agent_slot", "helper_slot"):
            m.pop(k, None)
    return dict(data)


def identity(grid_data: GridData) -> GridData:
    """The part of a grid's builtins the episodes depend on, as two grids are compared."""
    data = episodes_part(grid_data)
    run = data.get("run", {})
    if not run.get("graphs") and "steps" in run and "density" in run:  # one form (#49)
        run["graphs"] = [{"steps": s, "density": d} for s in run["steps"] for d in run["density"]]
    if run.get("graphs"):  # explicit graphs replace steps x density (recorded without them)
        run.pop("steps", None)
        run.pop("density", None)
    return data


@dataclass
class GridChange:
    added: list[str] = field(default_factory=list)  # "seeds 132-135", "arms hybrid"
    diff: list[str] = field(default_factory=list)  # every difference, "key: old -> new"
    compatible: bool = True

    @property
    def same(self) -> bool:
        return not self.diff


def _flat(value: object, prefix: str = "") -> dict[str, str]:
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if (
        isinstance(value, list)
        and value
        and all(isinstance(x, dict) and "name" in x for x in value)
    ):
        out = {}
        for x in value:
            out.update(_flat({k: v for k, v in x.items() if k != "name"}, f"{prefix}[{x['name']}]"))
            out.setdefault(f"{prefix}[{x['name']}]", "present")
        return out
    return {prefix: orjson.dumps(value).decode()}


# What a user changes on the command line or in the grid's [run] table, in the order the
# refusal names them (#40): models, arms, seeds, graphs, domains, briefs, then every other
# [run] field (the knobs), then decoding, then anything else (endpoints, memory).
_USER_FIRST = (
    "models",
    "run.arms",
    "run.variants",
    "run.seeds",
    "run.steps",
    "run.density",
    "run.graphs",
    "run.domains",
    "run.briefs",
    "run.",
    "decoding",
)


def _rank(key: str) -> int:
    return next((i for i, p in enumerate(_USER_FIRST) if key.startswith(p)), len(_USER_FIRST))


def _diff(old: GridData, new: GridData) -> list[str]:
    """Every difference, ``key old -> new``: what a user changes first (:data:`_USER_FIRST`)."""
    a, b = _flat(old), _flat(new)
    lines = []
    whole: set[str] = set()  # a model or endpoint one side lacks: one line, not each field
    for k in sorted(a.keys() | b.keys(), key=lambda k: (_rank(k), k)):
        if a.get(k) == b.get(k) or any(k.startswith(w + ".") for w in whole):
            continue
        if a.get(k) == "present" or b.get(k) == "present":
            whole.add(k)
            lines.append(f"{k} {'added' if k in b else 'removed'}")
        else:
            lines.append(f"{k} {a.get(k, '(none)')} -> {b.get(k, '(none)')}")
    return lines


def _with_defaults(data: GridData) -> GridData:
    """A manifest's grid with the fields added since it was written at their defaults, so a
    new field is no difference (``endpoints[cli].replica_slots (none) -> 0`` was noise);
    the builtins as they were when they no longer decode as a grid."""
    try:
        return dict(msgspec.to_builtins(msgspec.convert(data, Grid)))
    except msgspec.ValidationError:
        return data


def _fixed(data: GridData) -> GridData:
    """What a compatible change must leave exactly as it was (models and endpoints by name
    are compared one by one: new ones may be added)."""
    run = {k: v for k, v in data.get("run", {}).items() if k not in _GROWABLE}
    return {"run": run, "decoding": data.get("decoding")}


def _by_name(items: list[GridData]) -> dict[str, GridData]:
    return {x["name"]: x for x in items}


def compare_grids(old_data: GridData, new: Grid) -> GridChange:
    """How ``new`` differs from the grid whose builtins are ``old_data``."""
    new_data = identity(msgspec.to_builtins(new))
    old_id = identity(_with_defaults(old_data))
    change = GridChange(diff=_diff(old_id, new_data))
    if change.same:
        return change
    try:
        old = msgspec.convert(old_data, Grid)
    except msgspec.ValidationError:  # a manifest of an older grid format
        change.compatible = False
        return change
    old_models, new_models = _by_name(old_id["models"]), _by_name(new_data["models"])
    old_eps, new_eps = _by_name(old_id["endpoints"]), _by_name(new_data["endpoints"])
    change.compatible = (
        _fixed(old_id) == _fixed(new_data)
        and all(new_models.get(n) == m for n, m in old_models.items())
        and all(new_eps.get(n, e) == e for n, e in old_eps.items())
        and set(old.seeds()) <= set(new.seeds())
        and set(old.cells()) <= set(new.cells())
        and old.run.trials <= new.run.trials  # more trials per seed: only new trials run
    )
    if change.compatible:
        change.added = _added(old, new)
    return change


def _graph(c: CellKey) -> str:
    return graph_label(c.steps, c.density)


def _arm(c: CellKey) -> str:
    return f"{c.arm} variant" if c.knobs.changed() else c.arm


_PARTS: tuple[tuple[str, Callable[[CellKey], str]], ...] = (
    ("models", lambda c: c.model),
    ("graphs", _graph),
    ("domains", lambda c: c.domain),
    ("briefs", lambda c: c.brief),
    ("arms", _arm),
)


def _added(old: Grid, new: Grid) -> list[str]:
    out = []
    seeds = [s for s in new.seeds() if s not in set(old.seeds())]
    if seeds:
        out.append(f"seeds {format_seeds(seeds)}")
    if new.run.trials > old.run.trials:
        out.append(f"trials {old.run.trials} -> {new.run.trials} per seed")
    old_cells, new_cells = set(old.cells()), set(new.cells())
    for label, part in _PARTS:
        extra = sorted({part(c) for c in new_cells} - {part(c) for c in old_cells})
        if extra:
            out.append(f"{label} {', '.join(extra)}")
    if not out and new_cells > old_cells:
        out.append(f"{len(new_cells - old_cells)} cells")
    return out
