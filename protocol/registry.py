"""One registry for every extension point: arms, their sessions, analyses, figures, prompt
policies and knobs.

A :class:`Registry` maps names to entries of one kind. An entry is added where it is
defined (``REGISTRY.add(name, obj)``, or ``@REGISTRY.register(name)`` as a decorator), or
by a ``"module:Object"`` path (``REGISTRY.add_lazy(name, "pkg.mod:Obj")``) for one whose
module imports heavy libraries: that module is imported on the first :meth:`Registry.get`,
and the object is checked against the registry's kind then, as lm-evaluation-harness
registers its models. A name nobody added gets a one-line error with the closest names
(did-you-mean). Name lists are read from the live registry on each call
(:meth:`Registry.names`), never frozen at import, so an entry added later (a plugin, a
test's toy row) is seen everywhere.

Other packages add entries through Python entry points, one group per registry
(``state_ladder.arms``, ``state_ladder.analyses``, ...: :attr:`Registry.group`); each entry
point's name is the entry's name and its value the ``"module:Object"`` path.
:func:`runner.plugins.load_plugins` reads them (reading installed metadata is I/O, so not
here).

A plugin fails alone (#47): a lazy entry whose module raises at import (anything, not only
an ``ImportError``), is missing, or holds no valid entry is *broken*. Its module is imported
at most once (a failed module is remembered, for every registry naming it); the failure is
reported once through :attr:`Registry.on_broken` (the CLI prints one warning line naming
the distribution and the error); :meth:`Registry.entries` leaves it out, so the command
goes on with everything else; and only :meth:`Registry.get` of its name (a run that names
it) raises, with that line.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar, overload

__all__ = ["Registry", "RegistryError", "did_you_mean", "unknown_choice"]

T = TypeVar("T")
D = TypeVar("D")

# module -> why importing it failed: a broken plugin's module is imported once per process
_FAILED_MODULES: dict[str, str] = {}


class RegistryError(ValueError):
    """A name missing from a registry, added twice, or a lazy target of the wrong kind."""


def did_you_mean(name: str, choices: list[str] | tuple[str, ...]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or ``""``."""
    close = difflib.get_close_matches(name, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_choice(head: str, value: str, choices: list[str] | tuple[str, ...]) -> str:
    """``head`` (naming the unknown ``value``) with the did-you-mean and the choices, within
    80 columns with an ``error:`` prefix (#49): one line where it fits; else the
    did-you-mean alone where there is one; else the choices wrapped on lines of their own,
    indented under the head (each printed with its own prefix)."""
    import textwrap  # here: only a refusal needs it

    width = 80 - len("error: ")
    did = did_you_mean(value, choices)
    listed = ", ".join(choices)
    if len(full := f"{head}{did}; choose from {listed}") <= width:
        return full
    if did:
        return f"{head}{did}"
    wrapped = textwrap.wrap(listed, width, initial_indent="  ", subsequent_indent="  ")
    return "\n".join([f"{head}; choose from:", *wrapped])


class Registry(Generic[T]):
    """Named entries of one kind, eager or lazy, in the order they were added."""

    def __init__(
        self,
        kind: str,
        accepts: Callable[[object], bool],
        *,
        group: str | None = None,
        check_name: Callable[[str], None] | None = None,
    ) -> None:
        self.kind = kind  # "arm", "analysis", ... (in messages)
        self.group = group  # the entry-point group other packages add entries through
        self._accepts = accepts
        self._check_name = check_name
        self._order: list[str] = []
        self._loaded: dict[str, T] = {}
        self._lazy: dict[str, str] = {}
        self._origin: dict[str, str] = {}  # a lazy entry's distribution (messages)
        self._broken: dict[str, str] = {}  # name -> its one-line failure
        self.on_broken: Callable[[str], None] | None = None  # told each failure once

    # ---- adding -------------------------------------------------------------------------
    def add(self, name: str, obj: T) -> T:
        """Add ``obj`` as ``name`` (checked against the registry's kind now)."""
        self._new(name)
        if not self._accepts(obj):
            raise RegistryError(f"{self.kind} {name!r}: {obj!r} is not a valid {self.kind}")
        self._loaded[name] = obj
        self._order.append(name)
        return obj

    def add_lazy(self, name: str, target: str, origin: str = "") -> None:
        """Add ``name`` as ``"module:Object"``, imported on the first :meth:`get`; ``origin``
        (the distribution that declared it) is named when it fails."""
        module, sep, attr = target.partition(":")
        if not (sep and module and attr):
            raise RegistryError(f"{self.kind} {name!r}: {target!r} is not 'module:Object'")
        self._new(name)
        self._lazy[name] = target
        if origin:
            self._origin[name] = origin
        self._order.append(name)

    def register(self, name: str) -> Callable[[T], T]:
        """``@REGISTRY.register(name)`` on a class or function: :meth:`add` it as ``name``."""

        def bind(obj: T) -> T:
            return self.add(name, obj)

        return bind

    def remove(self, name: str) -> None:
        """Drop ``name`` (a test's toy entry; a plugin unloaded)."""
        if name not in self:
            raise RegistryError(f"no {self.kind} {name!r} to remove")
        self._order.remove(name)
        self._loaded.pop(name, None)
        self._lazy.pop(name, None)
        self._broken.pop(name, None)

    def _new(self, name: str) -> None:
        if self._check_name is not None:
            self._check_name(name)
        if name in self:
            raise RegistryError(f"{self.kind} {name!r} is registered twice")

    # ---- reading ------------------------------------------------------------------------
    def names(self) -> tuple[str, ...]:
        """Every name, loaded or not, in the order added."""
        return tuple(self._order)

    def loaded(self, name: str) -> bool:
        return name in self._loaded

    def __contains__(self, name: object) -> bool:
        return name in self._loaded or name in self._lazy or name in self._broken

    def broken(self) -> dict[str, str]:
        """Name -> the one-line failure of each lazy entry that failed to load so far."""
        return dict(self._broken)

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._order))

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def find(self, name: str) -> T | None: ...
    @overload
    def find(self, name: str, default: D) -> T | D: ...
    def find(self, name: str, default: object = None) -> object:
        """The entry of ``name``, or ``default`` when nobody added it or it is broken
        (:meth:`broken` says why)."""
        if name in self._lazy:
            self._load(name)
        return self._loaded.get(name, default)

    def get(self, name: str) -> T:
        """The entry of ``name`` (importing a lazy one now and checking its kind)."""
        found = self._loaded.get(name)
        if found is not None:
            return found
        if name in self._broken:
            raise RegistryError(self._broken[name])
        if name not in self._lazy:
            names = self.names()
            hint = did_you_mean(name, names)
            raise RegistryError(
                f"unknown {self.kind} {name!r}{hint}; available: {', '.join(names) or 'none'}"
            )
        loaded = self._load(name)
        if loaded is None:
            raise RegistryError(self._broken[name])
        return loaded

    def _load(self, name: str) -> T | None:
        """Import the lazy entry ``name`` (its module at most once); None when it is broken
        (recorded, and told to :attr:`on_broken` once)."""
        target = self._lazy.pop(name)
        module, _, attr = target.partition(":")
        why = _FAILED_MODULES.get(module)
        obj: object = None
        if why is None:
            try:
                obj = getattr(importlib.import_module(module), attr, None)
            except Exception as e:  # a plugin's import may raise anything: it fails alone
                why = _FAILED_MODULES[module] = f"cannot import {module}: {type(e).__name__}: {e}"
        if why is None and (obj is None or not self._accepts(obj)):
            why = f"{target} is not a valid {self.kind}"
        if why is not None:
            origin = f" (from {self._origin[name]})" if name in self._origin else ""
            line = " ".join(f"{self.kind} {name!r}{origin}: {why}".split())
            self._broken[name] = line
            if self.on_broken is not None:
                self.on_broken(line)
            return None
        loaded: T = obj  # type: ignore[assignment]  # checked by accepts
        self._loaded[name] = loaded
        return loaded

    def entries(self) -> tuple[T, ...]:
        """Every entry in order that loads, importing the lazy ones; a broken one is left
        out (:meth:`broken`), so one bad plugin stops nothing else."""
        out: list[T] = []
        for name in tuple(self._order):
            found = self._loaded.get(name)
            if found is None and name in self._lazy:
                found = self._load(name)
            if found is not None:
                out.append(found)
        return tuple(out)
