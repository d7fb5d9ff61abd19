"""The arm registry: each arm of the table (:data:`protocol.arms.table.ARMS`) bound to its session.

An arm is one unit: its row names its session, the class itself or its lazy
``"module:Class"`` path (``ArmSpec.session``). The first :func:`get` of an arm imports a lazy
path and checks that it names an :class:`~runner.arms.base.ArmSession`
(:class:`protocol.registry.Registry`); :func:`check` does the same for a grid's arms before a
run (``ladder validate``), in one line per arm. A name the arm table does not hold, or a row
with no session, is one line naming the arms that have one.
"""

from __future__ import annotations

from collections.abc import Iterable

from protocol.arms.table import arm_rank, arm_spec, arm_table
from protocol.registry import Registry, RegistryError, did_you_mean
from runner.arms.base import ArmSession

__all__ = ["SESSIONS", "check", "get", "registered"]


def _in_table(name: str) -> None:
    if arm_spec(name) is None:
        raise RegistryError(f"arm {name!r} is not in the arm table (protocol.arms.table.ARMS)")


def _is_session(o: object) -> bool:
    return isinstance(o, type) and issubclass(o, ArmSession)


# The sessions bound so far, each from its row on first use (a cache, not a second table).
SESSIONS: Registry[type[ArmSession]] = Registry("arm session", _is_session, check_name=_in_table)


def registered() -> tuple[str, ...]:
    """The arms whose row names a session, in the arm table's order."""
    return tuple(sorted((a.name for a in arm_table() if a.session is not None), key=arm_rank))


_BOUND_FROM: dict[str, object] = {}  # each bound name's ArmSpec.session


def _bind(name: str) -> None:
    spec = arm_spec(name)
    if name in SESSIONS:  # bound before: kept while its row still names the same session
        if spec is not None and _BOUND_FROM.get(name) == spec.session:
            return
        SESSIONS.remove(name)
    if spec is None:
        hint = did_you_mean(name, registered())
        raise RegistryError(f"arm {name!r} is not in the arm table{hint} (protocol.arms.table)")
    if spec.session is None:
        raise RegistryError(
            f"arm {name!r} is not implemented; available: {', '.join(registered())}"
        )
    if isinstance(spec.session, str):
        SESSIONS.add_lazy(name, spec.session)
    else:
        SESSIONS.add(name, spec.session)  # checked against ArmSession here
    _BOUND_FROM[name] = spec.session


def get(name: str) -> type[ArmSession]:
    """The session class of arm ``name`` (importing a lazy one now)."""
    _bind(name)
    return SESSIONS.get(name)


def check(names: Iterable[str]) -> list[str]:
    """One line per arm of ``names`` whose session does not import or is no session."""
    problems: list[str] = []
    for name in dict.fromkeys(names):
        try:
            get(name)
        except RegistryError as e:
            problems.append(str(e).splitlines()[0])
    return problems
