"""The preflight's second question (#49): does each server serve the model the grid names?

A server may answer a chat request for a model it does not serve (llama-cpp-python answers
any name with its own model), and a server left on a port answers a run meant for another:
the run then measures the wrong model under the right name. So before a run each model's
served name is looked up in its server's ``GET /models`` (OpenAI's list: ``data[].id``):

* listed: fine;
* the server lists models and not this one: refused (one line naming what it serves);
* the server lists none (no ``/models``, an empty list, a reply that is no list): a warning
  once per endpoint, since nothing can be checked there.

The embedded scripted endpoint is ours and answers every ``scripted/`` name: not asked.
The same pass asks llama.cpp's ``/slots`` where a model sets ``agent_slot`` /
``helper_slot`` (:mod:`runner.execution.slots`: warnings only).
"""

from __future__ import annotations

import orjson

from runner.client.endpoint import Endpoint
from runner.client.transport import TransportError
from runner.execution.slots import check_slots
from runner.grid.expand import Grid
from runner.grid.schema import EMBEDDED, redact_url

__all__ = ["check_served_models", "listed_models", "served_model_problems"]

_SHOWN = 3  # model ids a refusal names


async def listed_models(ep: Endpoint) -> list[str] | None:
    """The ids ``GET /models`` lists (None: no list: an error, a non-200, a malformed body)."""
    try:
        status, body = await ep.get("/models")
        data = orjson.loads(body) if status == 200 else None
    except (TransportError, OSError, TimeoutError, orjson.JSONDecodeError, ValueError):
        return None
    cards = data.get("data") if isinstance(data, dict) else None
    if not isinstance(cards, list):
        return None
    return [c["id"] for c in cards if isinstance(c, dict) and isinstance(c.get("id"), str)]


async def check_served_models(
    grid: Grid, endpoints: dict[str, Endpoint]
) -> tuple[list[str], list[str]]:
    """(problems, warnings): a model its server does not list; a server that lists none,
    and the slot options a server cannot be shown to honour (:func:`check_slots`)."""
    problems, warnings = await served_model_problems(grid, endpoints)
    return list(problems.values()), warnings


async def served_model_problems(
    grid: Grid, endpoints: dict[str, Endpoint], skip: frozenset[str] = frozenset()
) -> tuple[dict[str, str], list[str]]:
    """:func:`check_served_models` by model (model -> its line), leaving out ``skip`` (the
    models the preflight already stopped)."""
    problems: dict[str, str] = {}
    warnings: list[str] = []
    listed: dict[str, list[str] | None] = {}
    for m in grid.models:
        if m.name in skip or grid.endpoint(m.endpoint).urls() == [EMBEDDED]:
            continue
        ep = endpoints[m.endpoint]
        if m.endpoint not in listed:
            listed[m.endpoint] = await listed_models(ep)
            if not listed[m.endpoint]:
                warnings.append(
                    f"warning: endpoint {m.endpoint} ({redact_url(ep.base_urls[0])}) lists no "
                    "model at /models: which model answers there cannot be checked"
                )
        ids = listed[m.endpoint]
        if ids and m.served_name() not in ids:
            shown = ", ".join(repr(x[:60]) for x in ids[:_SHOWN])
            more = f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else ""
            problems[m.name] = (
                f"{m.served_name()!r} is not served at {redact_url(ep.base_urls[0])}: it "
                f"serves {shown}{more}"
            )
    return problems, warnings + await check_slots(grid, endpoints)
