"""The registry of the gate's τ²-bench domains: adding a domain is one subpackage
(``tau2gate/<name>/`` exporting ``DOMAIN``, a :class:`tau2gate.domain.Domain`, and holding
its ``reference.json``) and one entry in :data:`DOMAINS` below (docs/tau2.md)."""

from __future__ import annotations

from tau2gate import airline, retail, telecom
from tau2gate.domain import Domain

__all__ = ["DEFAULT", "DOMAINS", "UnknownDomain", "get_domain"]

DOMAINS: dict[str, Domain] = {d.name: d for d in (airline.DOMAIN, retail.DOMAIN, telecom.DOMAIN)}

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
