"""A served model reads a pack's wordings back (``ladder domain check --model``; issue #46,
ours), pure: what to ask, how to read the answer, where it disagrees with the pack's label.

Each wording of each template (asks, premature asks, redo probes, status questions,
legitimate redos; ``{wo}`` filled with a sample work order) and each filler is put to the
model with the pack's step list (:data:`protocol.strings.READ_PROMPT`); the model answers
``{"step": n, "order": true|false}``. The pack intends the wording's own template (a filler:
none, 0) and an order for every order field (:data:`protocol.domains.meaning.ORDER_FIELDS`),
none for a status question or a filler. Every answer that differs, or that cannot be read,
is one :class:`Disagreement`. The model is a second reader, not ground truth: the list is
for the pack's author to look at (docs/domains.md).
"""

from __future__ import annotations

import re

import msgspec

from protocol import strings
from protocol.domains.meaning import ORDER_FIELDS
from protocol.domains.shape import DomainPool

__all__ = [
    "MAX_ANSWER",
    "SAMPLE_WORK_ORDER",
    "Disagreement",
    "Item",
    "Reading",
    "disagreement",
    "parse_reading",
    "read_items",
    "read_prompt",
]

SAMPLE_WORK_ORDER = "#W4821"  # OURS: the work order a wording is read with
MAX_ANSWER = 4000  # OURS: characters of an answer read; the JSON object is short
_OBJECT = re.compile(r"\{[^{}]{0,400}\}")


class Item(msgspec.Struct, frozen=True, kw_only=True):
    """One wording to read: where it is in the pack, its text, and what the pack intends."""

    where: str  # "template garden-soil: asks[2]" or "fillers[1]"
    text: str  # the message as sent (the work order filled in)
    step: int  # the intended step's number in the list (0: none)
    order: bool  # whether the pack means it as an order


class Reading(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False):
    step: int
    order: bool


class Disagreement(msgspec.Struct, frozen=True, kw_only=True):
    item: Item
    said: str  # what the model said, in words


def read_items(pool: DomainPool) -> list[Item]:
    """Every wording the model reads, in pack order (templates numbered from 1)."""
    out: list[Item] = []
    for n, t in enumerate(pool.templates, start=1):
        for field in (*ORDER_FIELDS, "status"):
            for k, w in enumerate(getattr(t, field)):
                text = w.replace("{wo}", SAMPLE_WORK_ORDER)
                out.append(
                    Item(
                        where=f"template {t.slug}: {field}[{k}]",
                        text=text,
                        step=n,
                        order=field in ORDER_FIELDS,
                    )
                )
    out += [
        Item(where=f"fillers[{i}]", text=w, step=0, order=False) for i, w in enumerate(pool.fillers)
    ]
    return out


def read_prompt(pool: DomainPool, item: Item) -> str:
    steps = "\n".join(
        strings.READ_STEP.format(n=n, text=t.text) for n, t in enumerate(pool.templates, start=1)
    )
    return strings.READ_PROMPT.format(steps=steps, message=item.text)


def parse_reading(reply: str) -> Reading | None:
    """The first JSON object of the reply that reads as a :class:`Reading` (bounded, linear
    time: a scan for brace-delimited runs of at most 400 characters); None when none does."""
    for m in _OBJECT.finditer(reply[:MAX_ANSWER]):
        try:
            return msgspec.json.decode(m.group(0), type=Reading)
        except msgspec.DecodeError:
            continue
    return None


def disagreement(pool: DomainPool, item: Item, reply: str) -> Disagreement | None:
    """None when the model read ``item`` as the pack intends it."""
    got = parse_reading(reply)
    if got is None:
        return Disagreement(item=item, said=f"no answer it could read: {reply[:80]!r}")
    if (got.step, got.order) == (item.step, item.order):
        return None
    n = len(pool.templates)
    step = pool.templates[got.step - 1].slug if 1 <= got.step <= n else "no step"
    want = pool.templates[item.step - 1].slug if item.step else "no step"
    said = f"read as {step} ({'an order' if got.order else 'not an order'})"
    return Disagreement(item=item, said=f"{said}; the pack means {want} ({_order(item.order)})")


def _order(order: bool) -> str:
    return "an order" if order else "not an order"
