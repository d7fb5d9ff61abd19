"""Importing τ²-bench, with one line of error when it is absent or is the wrong `tau2`."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

__all__ = ["Tau2Missing", "require_tau2"]

INSTALL = (
    "pip install -e '.[tau2]' (tau2-bench from GitHub, Python >= 3.12) "
    "or pip install -e /path/to/tau2-bench"
)


class Tau2Missing(RuntimeError):
    """τ²-bench is not importable (its message is the one line to print)."""


def require_tau2(module: str = "tau2.registry") -> ModuleType:
    """Import a τ²-bench module or raise :class:`Tau2Missing` saying how to install it."""
    if importlib.util.find_spec("tau2") is None:
        raise Tau2Missing(f"tau2-bench is not installed: {INSTALL}")
    try:
        found = importlib.util.find_spec("tau2.registry") is not None
    except (ImportError, ValueError):  # a `tau2` whose own import fails is not tau2-bench either
        found = False
    if not found:
        raise Tau2Missing(
            "the installed `tau2` is not tau2-bench (PyPI's `tau2` is an unrelated package): "
            + INSTALL
        )
    return importlib.import_module(module)
