"""The preflight's slot question (#49): does a server that a model sends ``agent_slot`` /
``helper_slot`` to have those slots?

The slot options put llama.cpp's ``id_slot`` on each role's requests. A server without
slots (llama-cpp-python's, vLLM) ignores the field, and nothing in a reply says which slot
served it, so a grid that sets them can silently lose what they are for (the agent's
prefix re-evaluated after every helper call). llama.cpp's ``llama-server`` lists its slots
at ``GET /slots`` (the server's root, past ``/v1``); so before a run, for each endpoint
that a slot option is sent to:

* ``/slots`` lists N slots: a warning for each option naming a slot id of N or more;
* no ``/slots`` (404 and other statuses: llama-cpp-python's server, vLLM), a disabled one
  (llama.cpp's 501 without ``--slots``), a body that is no JSON list, or no answer: one
  warning per endpoint that the options cannot be checked there.

Warnings only, never a refusal: a run with a slot the server ignores still measures the
model, only slower. The embedded scripted endpoint is ours (it ignores ``id_slot``): not
asked. The read is the endpoint's bounded GET (:meth:`runner.client.endpoint.Endpoint.get`).
"""

from __future__ import annotations

import orjson

from protocol.records import Role
from runner.client.endpoint import Endpoint
from runner.client.transport import TransportError
from runner.grid.expand import Grid
from runner.grid.schema import EMBEDDED, redact_url

__all__ = ["check_slots", "server_slots"]

# OURS: llama.cpp's llama-server answers 501 at /slots when started without --slots
_DISABLED = 501


async def server_slots(ep: Endpoint) -> int | str:
    """The number of slots ``GET /slots`` lists at the server's root, or why none can be
    counted there."""
    try:
        status, body = await ep.get("/slots", root=True)
    except (TransportError, OSError, TimeoutError):
        return "its /slots did not answer"
    if status == _DISABLED:
        return "its /slots is disabled (llama.cpp's llama-server: start it with --slots)"
    if status != 200:
        return f"it has no /slots (HTTP {status})"
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        data = None
    if not isinstance(data, list):
        return "its /slots is not a list of slots"
    return len(data)


def _asked(grid: Grid) -> dict[str, list[tuple[str, str, int]]]:
    """Per endpoint name: (model, option, slot) for each slot option sent there."""
    out: dict[str, list[tuple[str, str, int]]] = {}
    roles: tuple[tuple[str, Role], ...] = (("agent_slot", "agent"), ("helper_slot", "matcher"))
    for m in grid.models:
        for what, role in roles:
            slot = m.slot_for(role)
            name = m.endpoint_for(role)
            if slot is None or grid.endpoint(name).urls() == [EMBEDDED]:
                continue
            out.setdefault(name, []).append((m.name, what, slot))
    return out


async def check_slots(grid: Grid, endpoints: dict[str, Endpoint]) -> list[str]:
    """The warnings (module docstring): a slot option naming a slot its server lacks, or
    sent to a server whose slots cannot be counted (once per endpoint)."""
    warnings = []
    for name, asked in _asked(grid).items():
        ep = endpoints[name]
        where = f"endpoint {name} ({redact_url(ep.base_urls[0])})"
        n = await server_slots(ep)
        if isinstance(n, str):
            options = ", ".join(sorted({what for _, what, _ in asked}))
            warnings.append(
                f"warning: {where}: {options} cannot be checked: {n}; a server without "
                "llama.cpp's slots ignores them (docs/cli.md)"
            )
            continue
        for model, what, slot in asked:
            if slot >= n:
                has = f"lists {n} slots (ids 0-{n - 1})" if n else "lists no slot"
                warnings.append(
                    f"warning: model {model!r}: {what} = {slot}, but {where} {has} at "
                    "/slots: start it with more slots (-np) or pick a listed id"
                )
    return warnings
