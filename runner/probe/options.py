"""The probe's options and tally (``ladder probe``'s flags) and the sampling each model's
re-asks use: the model card's settings (:mod:`runner.probe.model_cards`), each flag given
overriding."""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol.probe.turns import VARIANTS, Variant
from protocol.records import TurnKind
from runner.grid.schema import ModelConfig
from runner.probe.model_cards import Sampling, card_sampling

__all__ = [
    "GREEDY",
    "SAMPLING_KEYS",
    "ProbeError",
    "ProbeOptions",
    "ProbeSummary",
    "sampling_for",
]

SAMPLING_KEYS = ("temperature", "top_p", "top_k", "min_p")
GREEDY = Sampling(temperature=0.0, source="greedy")  # the greedy re-ask: nothing else sent


class ProbeError(ValueError):
    """A bad run directory or option: one line for the command line."""


@dataclass
class ProbeOptions:
    arm: str = "raw"
    variants: tuple[Variant, ...] = VARIANTS
    kinds: tuple[TurnKind, ...] = ("redo_probe",)
    samples: int = 8
    greedy: bool = True
    # None: the model card's setting (runner.probe.model_cards); top_p / top_k 0: not sent.
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    model: str | None = None  # only this model's cells (default: every model of the grid)
    limit: int | None = None  # at most this many trap turns per model (in log order)
    concurrency: int = 32


@dataclass
class ProbeSummary:
    traps: int = 0
    planned: int = 0
    skipped: int = 0  # already in the probe log
    asked: int = 0
    not_applicable: int = 0  # (trap, variant) pairs a variant does not apply to
    by_variant: dict[str, int] = field(default_factory=dict)  # re-asks made
    reexecuted: dict[str, int] = field(default_factory=dict)  # of which re-executed
    sampling: dict[str, Sampling] = field(default_factory=dict)  # per model probed


def sampling_for(model: ModelConfig, opts: ProbeOptions) -> Sampling:
    """The sampled re-asks' settings for ``model``: its card's, each flag given overriding."""
    card = card_sampling(model)
    if opts.temperature is None and opts.top_p is None and opts.top_k is None:
        return card
    return Sampling(
        temperature=card.temperature if opts.temperature is None else opts.temperature,
        top_p=card.top_p if opts.top_p is None else (opts.top_p or None),
        top_k=card.top_k if opts.top_k is None else (opts.top_k or None),
        min_p=card.min_p,
        source=f"flags over {card.source}",
    )
