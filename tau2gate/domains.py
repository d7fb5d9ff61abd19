"""The registry of the gate's τ²-bench domains: adding a domain is one subpackage
(``tau2gate/<name>/`` exporting ``DOMAIN``, a :class:`tau2gate.domain.Domain`, and holding
its ``reference.json``) and one line here: its import, and its name in :data:`DOMAINS`
(docs/tau2.md)."""

from __future__ import annotations

from tau2gate.airline import DOMAIN as AIRLINE
from tau2gate.domain import Domain
from tau2gate.retail import DOMAIN as RETAIL
from tau2gate.telecom import DOMAIN as TELECOM

__all__ = ["DEFAULT", "DOMAINS", "UnknownDomain", "get_domain"]

DOMAINS: dict[str, Domain] = {d.name: d for d in (AIRLINE, RETAIL, TELECOM)}

DEFAULT = "airline"
"""The domain of every call that names none (the gate's first domain; its results are pinned)."""


class UnknownDomain(ValueError):
    """A domain name not in :data:`DOMAINS` (its message is one line)."""


def get_domain(domain: Domain | str | None = None) -> Domain:
    """The domain named (``None``: :data:`DEFAULT`), or :class:`UnknownDomain`."""
    if isinstance(domain, Domain):
        return domain
    name = DEFAULT if domain is None else domain
    if name not in DOMAINS:
        raise UnknownDomain(f"unknown domain {name!r} (one of {', '.join(DOMAINS)})")
    return DOMAINS[name]
