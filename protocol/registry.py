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
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar, overload

__all__ = ["Registry", "RegistryError", "did_you_mean"]

T = TypeVar("T")
D = TypeVar("D")


class RegistryError(ValueError):
    """A name missing from a registry, added twice, or a lazy target of the wrong kind."""


def did_you_mean(name: str, choices: list[str] | tuple[str, ...]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or ``""``."""
    close = difflib.get_close_matches(name, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


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

    # ---- adding -------------------------------------------------------------------------
    def add(self, name: str, obj: T) -> T:
        """Add ``obj`` as ``name`` (checked against the registry's kind now)."""
        self._new(name)
        if not self._accepts(obj):
            raise RegistryError(f"{self.kind} {name!r}: {obj!r} is not a valid {self.kind}")
        self._loaded[name] = obj
        self._order.append(name)
        return obj

    def add_lazy(self, name: str, target: str) -> None:
        """Add ``name`` as ``"module:Object"``, imported on the first :meth:`get`."""
        module, sep, attr = target.partition(":")
        if not (sep and module and attr):
            raise RegistryError(f"{self.kind} {name!r}: {target!r} is not 'module:Object'")
        self._new(name)
        self._lazy[name] = target
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
        return name in self._loaded or name in self._lazy

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._order))

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def find(self, name: str) -> T | None: ...
    @overload
    def find(self, name: str, default: D) -> T | D: ...
    def find(self, name: str, default: object = None) -> object:
        """The entry of ``name``, or ``default`` when nobody added it."""
        return self.get(name) if name in self else default

    def get(self, name: str) -> T:
        """The entry of ``name`` (importing a lazy one now and checking its kind)."""
        found = self._loaded.get(name)
        if found is not None:
            return found
        target = self._lazy.get(name)
        if target is None:
            names = self.names()
            hint = did_you_mean(name, names)
            raise RegistryError(
                f"unknown {self.kind} {name!r}{hint}; available: {', '.join(names) or 'none'}"
            )
        module, _, attr = target.partition(":")
        try:
            obj = getattr(importlib.import_module(module), attr, None)
        except ImportError as e:
            raise RegistryError(f"{self.kind} {name!r}: cannot import {module}: {e}") from None
        if obj is None or not self._accepts(obj):
            raise RegistryError(f"{self.kind} {name!r}: {target} is not a valid {self.kind}")
        loaded: T = obj  # checked by accepts
        self._loaded[name] = loaded
        del self._lazy[name]
        return loaded

    def entries(self) -> tuple[T, ...]:
        """Every entry in order, loading the lazy ones."""
        return tuple(self.get(n) for n in self._order)
