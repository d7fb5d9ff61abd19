"""The policy compile: the agent model turns a domain's policy into deny rules (pure).

:func:`compile_prompt` builds the request (the domain's compile prompt, e.g.
:data:`tau2gate.airline.strings.COMPILE_PROMPT`, with its fact vocabulary and the policy as
the benchmark ships it); :func:`read_compile` parses and
validates the reply with :func:`tau2gate.parse.parse_rules`. Nothing is repaired or retried:
the rules that validated and the errors are what the gate runs with.
"""

from __future__ import annotations

from tau2gate.domain import Domain
from tau2gate.domains import get_domain
from tau2gate.parse import Parsed, parse_rules

__all__ = ["compile_prompt", "fact_vocabulary", "read_compile"]


def fact_vocabulary(domain: Domain | str | None = None) -> str:
    """One line per fact of ``domain`` (default airline): ``name (type; tools): meaning``."""
    return "\n".join(
        f"- {s.name} ({s.type}; {', '.join(s.tools)}): {s.doc}"
        for s in get_domain(domain).facts.values()
    )


def compile_prompt(policy: str, domain: Domain | str | None = None) -> str:
    """The compile request for ``policy`` in ``domain`` (default airline)."""
    dom = get_domain(domain)
    return dom.compile_prompt.format(
        tools=", ".join(dom.write_tools), facts=fact_vocabulary(dom), policy=policy.strip()
    )


def read_compile(reply: str, domain: Domain | str | None = None) -> Parsed:
    """The compiled rules and the compile errors, uncorrected."""
    return parse_rules(reply, domain)
