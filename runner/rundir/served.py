"""Honest labels for logs written before ``CellKey.served_by`` existed (#40).

A run made with ``--served scripted/...`` before the honest-labels change logged its cells
under the model's name alone (``qwen3-235b``); only its ``manifest.json`` says which scripted
model answered (the grid's ``[[models]] served``). Every reader of a run directory (score,
report, compare, cost, the viewer, a resume) labels such records from the manifest through
:func:`label_record`, so they read ``qwen3-235b <- scripted/synthetic`` as a run made today
does. A record that carries ``served_by`` keeps it; a manifest that is absent, unreadable or
hostile labels nothing, and a model whose served name a grid change (``--allow-grid-change``)
changed is left unlabelled (its older records may have been served by the earlier name).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

import msgspec

from protocol.config import scripted_served_by
from protocol.records import EpisodeRecord
from runner.rundir.manifest import MANIFEST, read_manifest

__all__ = ["label_record", "manifest_served", "served_for_log"]

_LOGS = "logs"  # runner.rundir.logs.LOGS (that module imports this one)


def manifest_served(run_dir: Path) -> dict[str, str]:
    """Model name -> the scripted model that served it, from ``run_dir/manifest.json``'s
    grid (only models whose served name is a scripted model other than their own name);
    empty when there is no readable manifest."""
    try:
        st = (run_dir / MANIFEST).lstat()
    except OSError:
        return {}
    return dict(_served(str(run_dir), st.st_mtime_ns, st.st_size))


@functools.lru_cache(maxsize=64)
def _served(run_dir: str, _mtime: int, _size: int) -> tuple[tuple[str, str], ...]:
    data = read_manifest(Path(run_dir))  # {} for a link, a FIFO, too big, not JSON: no labels
    grid = data.get("grid")
    models = grid.get("models") if isinstance(grid, dict) else None
    changed = _served_changed(data.get("history"))
    out: list[tuple[str, str]] = []
    for m in models if isinstance(models, list) else []:
        if not isinstance(m, dict):
            continue
        name, served = m.get("name"), m.get("served")
        if name in changed:
            continue  # served by another name before (--allow-grid-change): ambiguous
        if isinstance(name, str) and isinstance(served, str):
            by = scripted_served_by(name, served)
            if by:
                out.append((name, by))
    return tuple(out)


def _served_changed(history: object) -> set[str]:
    """The models whose served name a grid change (``--allow-grid-change``) changed: the
    manifest names only the last, so an unlabelled record of theirs may be of either."""
    out: set[str] = set()
    for entry in history if isinstance(history, list) else []:
        changes = entry.get("grid_change") if isinstance(entry, dict) else None
        for line in changes if isinstance(changes, list) else []:
            if isinstance(line, str) and line.startswith("models[") and "].served " in line:
                out.add(line[len("models[") : line.index("].served ")])
    return out


def served_for_log(path: Path) -> dict[str, str]:
    """:func:`manifest_served` of the run directory a log file lies in (the folder above
    its ``logs/``; a log outside a ``logs/`` folder: its own folder's manifest)."""
    for parent in path.parents:
        if parent.name == _LOGS:
            return manifest_served(parent.parent)
    return manifest_served(path.parent)


def label_record(record: EpisodeRecord, served: Mapping[str, str]) -> EpisodeRecord:
    """``record`` with its cell's ``served_by`` taken from ``served`` when it has none."""
    cell = record.cell
    if cell.served_by or not served:
        return record
    by = served.get(cell.model)
    if not by:
        return record
    return msgspec.structs.replace(record, cell=msgspec.structs.replace(cell, served_by=by))
