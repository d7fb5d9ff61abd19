"""The arm registry: each arm of the table (:data:`protocol.arms.table.ARMS`) bound to its session.

A session class registers under its table name with :func:`register`, as a decorator where
the class is defined (``@register("raw")``), or by a ``"module:Object"`` path for a class
whose module imports heavy libraries (``register("mem0", lazy="runner.arms.memory:Mem0Arm")``):
that module is imported on the first :func:`get`, and the class it names is checked to be an
:class:`~runner.arms.base.ArmSession` then (:class:`protocol.registry.Registry`). An arm
another package adds names its session in its row (``ArmSpec.session``), bound here on the
first :func:`get`. A name the arm table does not hold cannot be registered, and :func:`get`
of a table name nobody registered says so in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, overload

from protocol.arms.table import arm_rank, arm_spec
from protocol.registry import Registry, RegistryError
from runner.arms.base import ArmSession

__all__ = ["SESSIONS", "get", "register", "registered"]

A = TypeVar("A", bound=type[ArmSession])


def _in_table(name: str) -> None:
    if arm_spec(name) is None:
        raise RegistryError(f"arm {name!r} is not in the arm table (protocol.arms.table.ARMS)")


SESSIONS: Registry[type[ArmSession]] = Registry(
    "arm session",
    lambda o: isinstance(o, type) and issubclass(o, ArmSession),
    check_name=_in_table,
)


@overload
def register(name: str) -> Callable[[A], A]: ...
@overload
def register(name: str, *, lazy: str) -> None: ...
def register(name: str, *, lazy: str | None = None) -> Callable[[A], A] | None:
    """Bind the table's arm ``name`` to its session class: ``@register(name)`` on the class,
    or ``register(name, lazy="module:Object")`` to import it on first use."""
    if lazy is not None:
        SESSIONS.add_lazy(name, lazy)
        return None

    def bind(cls: A) -> A:
        SESSIONS.add(name, cls)
        return cls

    return bind


def registered() -> tuple[str, ...]:
    """The names registered, loaded or not, in the arm table's order."""
    return tuple(sorted(SESSIONS.names(), key=arm_rank))


def get(name: str) -> type[ArmSession]:
    """The session class of arm ``name`` (importing a lazy one now)."""
    spec = arm_spec(name)
    if name not in SESSIONS and spec is not None and spec.session is not None:
        SESSIONS.add_lazy(name, spec.session)
    if name not in SESSIONS:
        raise RegistryError(
            f"arm {name!r} is not implemented; available: {', '.join(registered())}"
        )
    return SESSIONS.get(name)
