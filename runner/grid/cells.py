"""The grid as read from its file: its sections, and the configurations and cells it names
(:func:`runner.grid.expand.expand` orders them into tasks; :mod:`runner.grid.checks` checks
them)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from protocol.config import Config, Schedule, scripted_served_by
from protocol.episode.versions import Paraphrases
from protocol.records import CellKey, Knobs
from runner.grid.errors import GridError
from runner.grid.paraphrase_cache import load_paraphrases
from runner.grid.schema import (
    EMBEDDED,
    Decoding,
    EndpointConfig,
    MemorySettings,
    ModelConfig,
    RunConfig,
)
from runner.grid.seeds import parse_seeds

__all__ = ["Grid"]


class Grid(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    run: RunConfig = msgspec.field(default_factory=RunConfig)
    memory: MemorySettings = msgspec.field(default_factory=MemorySettings)
    endpoints: list[EndpointConfig] = []
    models: list[ModelConfig] = []
    decoding: Decoding = msgspec.field(default_factory=Decoding)

    def endpoint(self, name: str) -> EndpointConfig:
        for e in self.endpoints:
            if e.name == name:
                return e
        if name == EMBEDDED:
            return EndpointConfig(name=EMBEDDED, base_url=EMBEDDED)
        raise GridError(f"unknown endpoint {name!r}")

    def model(self, name: str) -> ModelConfig:
        for m in self.models:
            if m.name == name:
                return m
        raise GridError(f"unknown model {name!r}")

    def graphs(self) -> list[tuple[int, float]]:
        if self.run.graphs:
            return [(g.steps, g.density) for g in self.run.graphs]
        return [(s, d) for s in self.run.steps for d in self.run.density]

    def seeds(self) -> list[int]:
        return parse_seeds(self.run.seeds)

    def paraphrases(self) -> Paraphrases | None:
        """The held-out cache tier 2 reads (checked by ``check_grid``), or None."""
        if self.run.paraphrase_cache is None:
            return None
        return load_paraphrases(
            Path(self.run.paraphrase_cache), self.run.domains, self.run.generator
        )

    def cells(self) -> list[CellKey]:
        """Every model's cells: each arm, then each variant the model runs (a variant's
        ``models``, when it names some, are the only ones that run it)."""
        return [
            CellKey.of(
                config,
                model=m.name,
                regime=m.regime,
                arm=a,
                knobs=k,
                served_by=scripted_served_by(m.name, m.served_name()),
            )
            for m in self.models
            for config in self.configs()
            for (a, k) in self._arms(m.name)
        ]

    def _arms(self, model: str) -> list[tuple[str, Knobs]]:
        """(arm, knobs) of each cell ``model`` runs, in grid order."""
        arms: list[tuple[str, Knobs]] = [(a, Knobs()) for a in self.run.arms]
        return arms + [(v.arm, v.knobs()) for v in self.run.variants if v.runs_for(model)]

    def configs(self) -> list[Config]:
        """The configurations every model runs, in grid order."""
        schedules: list[Schedule | None] = [*self.run.schedules] or [None]
        return [
            Config(
                steps=s,
                density=d,
                domain=dom,
                brief=b,
                schedule=sched,
                paraphrase_tier=w.paraphrase_tier,
                ambiguous_rate=w.ambiguous_rate,
            )
            for (s, d) in self.graphs()
            for dom in self.run.domains
            for b in self.run.briefs
            for sched in schedules
            for w in self.run.wording_list()
        ]
