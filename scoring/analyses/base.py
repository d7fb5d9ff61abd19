"""What a report table is: an :class:`Analysis`, declared where its lines are computed (pure).

An analysis has a name (its key in ``report-analyses.json``), the paper table it feeds, a
compute over one batch of one scoring pass (the records of one log file with their scores,
per-turn detail included), a finish that makes its lines from every batch's parts, and a
render of its lines as a Markdown section of the report; its JSON is its lines, encoded by
msgspec. A compute declared as a :class:`Fold` (what one pair gives, then what a batch's
values make) lets ``ladder report``'s workers drop each record as soon as it is scored, as
``ladder score``'s do (#50, tenth round); a plain function still works, its batch kept.
:data:`scoring.analyses.registry.ANALYSES` lists them once; ``ladder report`` loops over
that tuple (docs/extending.md, "A new table").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar, cast

import msgspec

from protocol.records import CellKey, EpisodeRecord
from scoring.md_table import markdown_table
from scoring.replay.episode_score import EpisodeScore
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import cell_sort_key

__all__ = [
    "Analyses",
    "Analysis",
    "Collector",
    "Fold",
    "Pair",
    "Table",
    "by_cell",
    "markdown_section",
]

Pair = tuple[EpisodeRecord, EpisodeScore]


class _HasCell(Protocol):
    @property
    def cell(self) -> CellKey: ...


P = TypeVar("P")  # what one batch gives
L = TypeVar("L", bound=msgspec.Struct)  # a line of the table
C = TypeVar("C", bound=_HasCell)
V = TypeVar("V")  # what one pair gives a Fold


@dataclass(frozen=True)
class Fold(Generic[V, P]):
    """A compute declared per pair: ``each`` is what one (record, score) pair gives (None:
    nothing, the pair is not the analysis's), ``whole`` the batch's parts from its pairs'
    values in the batch's order. Called, it is the compute it declares; a caller that has
    each pair once (``ladder report``'s workers, reading a log line by line) calls ``each``
    while the record is in hand and keeps only the values. ``each`` reads its pair and the
    cache alone, never another pair (a batch is one cell's pairs, trial 0 of each seed)."""

    each: Callable[[Pair, EpisodeCache], V | None]
    whole: Callable[[list[V]], Sequence[P]]

    def __call__(self, batch: Iterable[Pair], cache: EpisodeCache) -> Sequence[P]:
        each = self.each
        return self.whole([v for p in batch if (v := each(p, cache)) is not None])


def by_cell(parts: list[C]) -> tuple[C, ...]:
    """Lines that are already the table's, in cell order (the usual finish)."""
    return tuple(sorted(parts, key=lambda x: cell_sort_key(x.cell)))


class Collector(Protocol):
    """One analysis's parts over one report's scoring pass, batch by batch."""

    def add(
        self,
        batch: Sequence[Pair],
        cache: EpisodeCache,
        shared: dict[object, Sequence[object]] | None = None,
    ) -> None: ...
    def lines(self) -> tuple[msgspec.Struct, ...]: ...


class Table(Protocol):
    """What the report's loop sees of an :class:`Analysis` (whatever its line type)."""

    @property
    def name(self) -> str: ...
    @property
    def table(self) -> str: ...
    def collector(self) -> Collector: ...
    def section(self, analyses: Analyses) -> list[str]: ...


@dataclass(frozen=True)
class Analysis(Generic[P, L]):
    """One report table: see the module docstring."""

    name: str  # its key in report-analyses.json
    table: str  # the paper's table it feeds ("Table 11"), or what it is beside
    compute: Callable[[Sequence[Pair], EpisodeCache], Sequence[P]]  # one batch
    finish: Callable[[list[P]], tuple[L, ...]]  # every batch's parts -> the lines
    markdown: Callable[[tuple[L, ...]], list[str]]  # its section ([] leaves it out)

    def collector(self) -> _Collector[P, L]:
        return _Collector(self)

    def section(self, analyses: Analyses) -> list[str]:
        """Its Markdown section of the report ([] when nothing applies)."""
        return self.markdown(analyses.of(self))


class _Collector(Generic[P, L]):
    def __init__(self, analysis: Analysis[P, L]) -> None:
        self.analysis = analysis
        self.parts: list[P] = []

    def add(
        self,
        batch: Sequence[Pair],
        cache: EpisodeCache,
        shared: dict[object, Sequence[object]] | None = None,
    ) -> None:
        """Add what the analysis makes of ``batch``; analyses sharing one ``compute`` (the
        dose-response and the interaction tables both read a batch's outcomes) compute it
        once per batch through ``shared``, the batch's memo keyed by the compute."""
        compute = self.analysis.compute
        if shared is None:
            self.parts += compute(batch, cache)
            return
        if compute not in shared:
            shared[compute] = compute(batch, cache)
        self.parts += cast(Sequence[P], shared[compute])

    def lines(self) -> tuple[L, ...]:
        return self.analysis.finish(self.parts)


@dataclass(frozen=True)
class Analyses:
    """The lines of every analysis of one report, by analysis name, in the tuple's order."""

    lines: dict[str, tuple[msgspec.Struct, ...]] = field(default_factory=dict)

    def of(self, analysis: Analysis[P, L]) -> tuple[L, ...]:
        """The lines of ``analysis`` (empty when it did not run); its collector wrote them."""
        return cast(tuple[L, ...], self.lines.get(analysis.name, ()))

    def json(self) -> bytes:
        """The report's ``-analyses.json``: each analysis's lines under its name."""
        return msgspec.json.format(msgspec.json.encode(self.lines))


def markdown_section(
    title: str, note: str, header: Sequence[str], rows: Sequence[Sequence[str]]
) -> list[str]:
    """A report section: its heading, what it shows, its table ([] without rows)."""
    if not rows:
        return []
    return ["", f"## {title}", "", note, "", markdown_table(header, rows)]
