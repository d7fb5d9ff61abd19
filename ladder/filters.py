"""``--arm``, ``--model`` and ``--cell``: which cells ``ladder score``, ``report`` and ``cost``
read (#40). Each takes a comma-separated list; a cell is kept when it matches every filter
given: its arm is listed, its model (the name, or the label ``model <- served``) is listed,
its slug contains one of the ``--cell`` texts. A plain model name matches in every run, also
when several runs are read together (#49). A filter that keeps nothing is refused in one
line naming the flag whose values matched no cell, with the nearest value there is."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
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

    def keep(self, cell: CellKey, run: str = "") -> bool:
        """Whether ``cell`` passes every filter; ``run``: the run it was read from, when
        several are (its ``run: model`` name then matches too)."""
        if self.arms is not None and cell.arm not in self.arms:
            return False
        if self.models is not None and not _names(cell, run) & self.models:
            return False
        slug = cell.slug()
        return self.cells is None or any(c in slug for c in self.cells)

    def records(self, records: Iterable[EpisodeRecord], run: str = "") -> list[EpisodeRecord]:
        return [r for r in records if self.keep(r.cell, run)]

    def chosen(self, records: Iterable[EpisodeRecord], run: str = "") -> list[EpisodeRecord]:
        """The records kept; refused (:meth:`check`, naming ``run``) when they are none."""
        given = list(records)
        kept = self.records(given)
        if not kept and given:
            self.check([r.cell for r in given], [], run)
        return kept

    def check(self, cells: Iterable[CellKey], kept: Iterable[object], runs: str = "") -> None:
        """Refuse when ``kept`` is empty: the first flag none of whose values matches any of
        ``cells``, with the nearest value (``did you mean``); else the flags together."""
        if any(True for _ in kept):
            return
        cells = list(cells)
        where = f" in {runs}" if runs else ""
        given = (
            ("--arm", self.arms, {c.arm for c in cells}, _equal),
            ("--model", self.models, {n for c in cells for n in _names(c)}, _equal),
            ("--cell", self.cells, _slugs(cells), _part),
        )
        for flag, wanted, there, match in given:
            if wanted is None:
                continue
            missed = sorted(w for w in wanted if not any(match(w, t) for t in there))
            if len(missed) == len(wanted):
                raise UsageError(f"{flag} matched no cell{where}: {_nearest(missed, there)}")
        raise UsageError(f"no cell{where} matches --arm, --model and --cell together")


def _names(cell: CellKey, run: str = "") -> set[str]:
    """The names a ``--model`` value may give for ``cell``: its model, its label
    (``qwen3-235b <- scripted/synthetic``), the scripted model that served it and, read from
    ``run`` among several, each with the run first (``runs/a: qwen3-235b``)."""
    plain = {cell.model, model_label(cell)}
    if cell.served_by:
        plain.add(cell.served_by.split("?", 1)[0])
    return plain | {f"{run}: {n}" for n in plain} if run else plain


def _slugs(cells: Iterable[CellKey]) -> set[str]:
    """The cells' slugs and their parts (``raw``, ``S5``), for ``--cell`` and its hint."""
    return {x for c in cells for x in (c.slug(), *c.slug().split("__"))}


def _equal(wanted: str, there: str) -> bool:
    return wanted == there


def _part(wanted: str, there: str) -> bool:
    return wanted in there


def _nearest(missed: Sequence[str], there: Iterable[str]) -> str:
    """``'x'`` (did you mean ``'y'``?) for the first value missed; the others counted."""
    first = missed[0]
    hint = difflib.get_close_matches(first, sorted(there), n=1, cutoff=0.5)
    did = f" (did you mean {hint[0]!r}?)" if hint else ""
    more = f" and {len(missed) - 1} more" if len(missed) > 1 else ""
    return f"{first[:40]!r}{did}{more}"


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
