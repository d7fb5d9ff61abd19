"""A run's details (#40): what ``report.md`` and the viewer's header show of its manifest,
as ``inspect view`` shows each log's header: the served models and their endpoints,
decoding, seeds and the grid's axes, the generator, the git revision and versions, the
overrides given, when it started and how often it was resumed. Pure: the manifest's
builtins in, (field, value) pairs out; a field the manifest lacks is left out."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

__all__ = ["run_details"]


def _when(t: object) -> str:
    if not isinstance(t, int | float):
        return "?"
    return datetime.datetime.fromtimestamp(t, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _join(xs: object) -> str:
    return ", ".join(str(x) for x in xs) if isinstance(xs, list) else str(xs)


def _models(grid: Mapping[str, Any]) -> list[str]:
    urls = {}
    for e in grid.get("endpoints") or []:
        if isinstance(e, dict):
            base = e.get("base_urls") or [e.get("base_url") or "embedded"]
            urls[e.get("name")] = _join(base)
    out = []
    for m in grid.get("models") or []:
        if not isinstance(m, dict):
            continue
        served = m.get("served") or m.get("name")
        shown = m.get("name") if served == m.get("name") else f"{m.get('name')} <- {served}"
        where = urls.get(m.get("endpoint"), "embedded")
        out.append(f"{shown} ({m.get('regime', 'no-think')}) at {where}")
    return out


def run_details(manifest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The details of the run whose ``manifest.json`` builtins are *manifest*."""
    raw_grid = manifest.get("grid")
    grid: Mapping[str, Any] = raw_grid if isinstance(raw_grid, dict) else {}
    raw_run = grid.get("run")
    run: Mapping[str, Any] = raw_run if isinstance(raw_run, dict) else {}
    out: list[tuple[str, str]] = [("model", m) for m in _models(grid)]
    decoding = grid.get("decoding")
    if isinstance(decoding, dict):
        parts = [f"temperature {decoding.get('temperature', 0.0)}"]
        if decoding.get("top_p") is not None:
            parts.append(f"top_p {decoding['top_p']}")
        budget = decoding.get("reply_budget")
        if isinstance(budget, dict):
            parts.append("reply budget " + ", ".join(f"{k} {v}" for k, v in budget.items()))
        out.append(("decoding", "; ".join(parts)))
    if run:
        graphs = run.get("graphs") or [
            {"steps": s, "density": d} for s in run.get("steps", []) for d in run.get("density", [])
        ]
        shown = ", ".join(f"S={g.get('steps')} rho={g.get('density')}" for g in graphs)
        out += [
            ("seeds", str(run.get("seeds", "?"))),
            ("arms", _join(run.get("arms", []))),
            ("graphs", shown),
            ("domains", _join(run.get("domains", []))),
            ("briefs", _join(run.get("briefs", []))),
        ]
    for key, name in (("generator_version", "generator"), ("git_revision", "git revision")):
        if manifest.get(key) is not None:
            out.append((name, str(manifest[key])))
    versions = manifest.get("versions")
    if isinstance(versions, dict):
        out.append(("versions", ", ".join(f"{k} {v}" for k, v in versions.items())))
    if "started" in manifest:
        out.append(("started", _when(manifest["started"])))
    history = [h for h in manifest.get("history") or [] if isinstance(h, dict)]
    if len(history) > 1:
        out.append(("resumed", f"{len(history) - 1} times, last {_when(history[-1].get('time'))}"))
    for i, h in enumerate(history, 1):
        if isinstance(h.get("overrides"), dict) and h["overrides"]:
            given = " ".join(f"{k} {v}" for k, v in h["overrides"].items())
            out.append((f"overrides (run {i})", given))
    return out
