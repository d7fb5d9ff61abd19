"""Other packages' arms, analyses, figures and prompt policies, through Python entry points.

Each registry names its entry-point group (:attr:`protocol.registry.Registry.group`):
``state_ladder.arms`` (an :class:`~protocol.arms.table.ArmSpec` whose ``session`` names its
session class), ``state_ladder.analyses``, ``state_ladder.figures`` and
``state_ladder.policies``. An entry point's name is the entry's name and its value the
``"module:Object"`` path, added lazily: the plugin's module is imported on first use.
Knobs are fields of the log record (:class:`protocol.config.Knobs`), which a log must be
able to decode without the plugin, so they are not open to entry points. A package that
declares, in its ``pyproject.toml``::

    [project.entry-points."state_ladder.arms"]
    reminder = "my_arms.reminder:SPEC"

runs ``--arms raw,reminder`` once installed (docs/extending.md, "An arm in your own
package").

A broken entry point fails alone (#47): its module raising at import, missing, or holding
no valid entry is one ``warning:`` line on stderr naming the entry, its distribution and the
error (:func:`warn_broken`, once per entry), the command goes on with everything else, and
it is an error only when a run names it (:mod:`protocol.registry`).
"""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint, entry_points

from protocol.arms.policy import POLICIES
from protocol.arms.table import ARMS
from protocol.registry import RegistryError
from protocol.visible import one_line
from scoring.analyses.registry import ANALYSES
from scoring.report.paper_figures import FIGURES

__all__ = ["load_plugins", "plugin_groups", "warn_broken"]

_LOADED: set[tuple[str, str]] = set()  # (group, name) added already


def plugin_groups() -> dict[str, object]:
    """Entry-point group -> the registry it adds to."""
    return {r.group: r for r in (ARMS, ANALYSES, FIGURES, POLICIES) if r.group is not None}


def warn_broken(line: str) -> None:
    """Print a broken plugin's line as one warning on stderr (escapes shown, never obeyed)."""
    print(f"warning: {one_line(line)}; the command goes on without it", file=sys.stderr)


def _origin(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", None)
    return f"distribution {name}" if isinstance(name, str) else f"entry point {ep.value}"


def load_plugins() -> list[str]:
    """Add every installed package's entries (lazily) to their registries; returns one line
    per entry point refused (a name taken, a value that is not ``module:Object``). Calling
    it again adds only what was installed since."""
    problems: list[str] = []
    for registry in (ARMS, ANALYSES, FIGURES, POLICIES):
        registry.on_broken = warn_broken
        group = registry.group
        if group is None:
            continue
        for ep in entry_points(group=group):
            if (group, ep.name) in _LOADED:
                continue
            _LOADED.add((group, ep.name))
            try:
                registry.add_lazy(ep.name, ep.value, _origin(ep))
            except (RegistryError, ValueError) as e:
                problems.append(f"plugin {ep.name!r} ({group}) is ignored: {e}")
    return problems
