"""The pack reader (``ladder domain check --model``; issue #46, ours): a served model reads
every wording of a pack and says which step it asks about and whether it orders it
(:mod:`protocol.domains.readback`); one call per wording through the runner's client (its
limiter, retries and backoff), at the matcher's budget and temperature 0."""

from __future__ import annotations

import asyncio

from protocol.domains.readback import Disagreement, disagreement, read_items, read_prompt
from protocol.domains.shape import DomainPool
from runner.client.endpoint import CallFailed, Endpoint
from runner.grid.schema import Decoding, ModelConfig

__all__ = ["read_all"]


async def read_all(
    endpoint: Endpoint, model: ModelConfig, decoding: Decoding, pool: DomainPool
) -> tuple[int, list[Disagreement]]:
    """(wordings read, the readings that disagree with the pack, in pack order); a call that
    fails is a disagreement that says so. The wordings are bounded by the pack's size (18
    templates, five fields of three, and its fillers), the calls by the endpoint's limiter."""
    kwargs = model.chat_kwargs(decoding, "matcher")
    items = read_items(pool)
    found: list[Disagreement | None] = [None] * len(items)

    async def one(i: int) -> None:
        messages = [{"role": "user", "content": read_prompt(pool, items[i])}]
        try:
            reply = await endpoint.chat(messages=messages, **kwargs)
        except CallFailed as e:
            found[i] = Disagreement(item=items[i], said=f"the call failed: {e}")
            return
        found[i] = disagreement(pool, items[i], reply.content)

    async with asyncio.TaskGroup() as group:
        for i in range(len(items)):
            group.create_task(one(i))
    return len(items), [d for d in found if d is not None]
