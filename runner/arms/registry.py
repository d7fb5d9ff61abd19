"""The arm registry: each name of the arm table (:mod:`protocol.arms`) bound to its session.

A session class registers under its table name with :func:`register`, as a decorator where
the class is defined (``@register("raw")``), or by a ``"module:Object"`` path for a class
whose module imports heavy libraries (``register("mem0", lazy="runner.arms.memory:Mem0Arm")``):
that module is imported on the first :func:`get`, and the class it names is checked to be an
:class:`~runner.arms.base.ArmSession` then. A name the arm table does not hold cannot be
registered, and :func:`get` of a table name nobody registered says so in one line.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TypeVar, overload

from protocol.arms import arm_rank, arm_spec
from runner.arms.base import ArmSession

__all__ = ["get", "register", "registered"]

A = TypeVar("A", bound=type[ArmSession])

_CLASSES: dict[str, type[ArmSession]] = {}
_LAZY: dict[str, str] = {}  # name -> "module:Object", until the first get


def _check_name(name: str) -> None:
    if arm_spec(name) is None:
        raise ValueError(f"arm {name!r} is not in the arm table (protocol.arms.ARM_TABLE)")
    if name in _CLASSES or name in _LAZY:
        raise ValueError(f"arm {name!r} is registered twice")


@overload
def register(name: str) -> Callable[[A], A]: ...
@overload
def register(name: str, *, lazy: str) -> None: ...
def register(name: str, *, lazy: str | None = None) -> Callable[[A], A] | None:
    """Bind the table's arm ``name`` to its session class: ``@register(name)`` on the class,
    or ``register(name, lazy="module:Object")`` to import it on first use."""
    if lazy is not None and ":" not in lazy:
        raise ValueError(f"arm {name!r}: lazy={lazy!r} is not 'module:Object'")
    _check_name(name)
    if lazy is not None:
        _LAZY[name] = lazy
        return None

    def bind(cls: A) -> A:
        if not issubclass(cls, ArmSession):
            raise TypeError(f"arm {name!r}: {cls!r} is not an ArmSession subclass")
        _CLASSES[name] = cls
        return cls

    return bind


def registered() -> tuple[str, ...]:
    """The names registered, loaded or not, in the arm table's order."""
    return tuple(sorted({*_CLASSES, *_LAZY}, key=arm_rank))


def get(name: str) -> type[ArmSession]:
    """The session class of arm ``name`` (importing a lazy one now)."""
    cls = _CLASSES.get(name)
    if cls is not None:
        return cls
    target = _LAZY.get(name)
    if target is None:
        raise ValueError(f"arm {name!r} is not implemented; available: {', '.join(registered())}")
    module, _, attr = target.partition(":")
    found = getattr(importlib.import_module(module), attr, None)
    if not (isinstance(found, type) and issubclass(found, ArmSession)):
        raise TypeError(f"arm {name!r}: {target} is not an ArmSession subclass")
    _CLASSES[name] = found
    del _LAZY[name]
    return found
