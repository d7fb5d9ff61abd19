"""``--arm``, ``--model`` and ``--cell``: which cells ``ladder score``, ``report`` and ``cost``
read (#40). Each takes a comma-separated list; a cell is kept when it matches every filter
given: its arm is listed, its model (the name, or the label ``model <- served``) is listed,
its slug contains one of the ``--cell`` texts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated

import typer

from ladder.errors import UsageError
from protocol.config import model_label
from protocol.records import CellKey, EpisodeRecord

__all__ = ["ArmOption", "CellFilter", "CellOption", "ModelOption", "cell_filter"]

ArmOption = Annotated[str | None, typer.Option("--arm", help="Only these arms (comma-separated).")]
ModelOption = Annotated[
    str | None, typer.Option("--model", help="Only these models (comma-separated).")
]
CellOption = Annotated[
    str | None,
    typer.Option("--cell", help="Only cells whose slug contains one of these (comma-separated)."),
]


@dataclass(frozen=True)
class CellFilter:
    arms: frozenset[str] | None = None
    models: frozenset[str] | None = None
    cells: tuple[str, ...] | None = None

    @property
    def active(self) -> bool:
        return any(x is not None for x in (self.arms, self.models, self.cells))

    def keep(self, cell: CellKey) -> bool:
        if self.arms is not None and cell.arm not in self.arms:
            return False
        if self.models is not None and not {cell.model, model_label(cell)} & self.models:
            return False
        slug = cell.slug()
        return self.cells is None or any(c in slug for c in self.cells)

    def records(self, records: Iterable[EpisodeRecord]) -> list[EpisodeRecord]:
        return [r for r in records if self.keep(r.cell)]


def _items(flag: str, text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    if not items:
        raise UsageError(f"{flag}: empty list")
    return items


def cell_filter(arm: str | None, model: str | None, cell: str | None) -> CellFilter:
    arms, models = _items("--arm", arm), _items("--model", model)
    return CellFilter(
        arms=None if arms is None else frozenset(arms),
        models=None if models is None else frozenset(models),
        cells=_items("--cell", cell),
    )
