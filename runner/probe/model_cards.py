"""The sampling settings a model's card recommends, for the probe's sampled re-asks.

Appendix A.4 samples each probe variant "at the model card's sampling settings" and does
not print them. This table holds the cards we know (OURS, docs/probe.md): the Qwen3 family's
cards recommend temperature 0.6, top_p 0.95, top_k 20, min_p 0 in thinking mode and 0.7,
0.8, 20, 0 otherwise. A model matches a card when its served name (lowercased) contains the
card's family key; the regime picks the row. A model without a known card falls back to the
Qwen3 non-thinking temperature and top_p (no top_k / min_p, which not every API takes), and
the probe says so; ``--temperature`` / ``--top-p`` / ``--top-k`` override either.
"""

from __future__ import annotations

import msgspec

from runner.grid.schema import ModelConfig

__all__ = ["CARDS", "FALLBACK", "Sampling", "card_sampling"]


class Sampling(msgspec.Struct, frozen=True, kw_only=True):
    temperature: float
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    source: str = ""

    def body(self) -> dict[str, object]:
        """The request fields beside ``temperature`` (top_k / min_p go in the body as vLLM
        and SGLang read them)."""
        out: dict[str, object] = {}
        if self.top_p is not None:
            out["top_p"] = self.top_p
        if self.top_k is not None:
            out["top_k"] = self.top_k
        if self.min_p is not None:
            out["min_p"] = self.min_p
        return out


# (family key in the served name, regime) -> the card's settings
CARDS: dict[tuple[str, str], Sampling] = {
    ("qwen3", "no-think"): Sampling(
        temperature=0.7, top_p=0.8, top_k=20, min_p=0.0, source="Qwen3 card, non-thinking"
    ),
    ("qwen3", "thinking"): Sampling(
        temperature=0.6, top_p=0.95, top_k=20, min_p=0.0, source="Qwen3 card, thinking"
    ),
}
FALLBACK = Sampling(
    temperature=0.7, top_p=0.8, source="no card known: Qwen3 non-thinking temperature, top_p"
)


def card_sampling(model: ModelConfig) -> Sampling:
    """The card's settings for ``model`` in its regime, else :data:`FALLBACK`."""
    served = model.served_name().lower()
    for (family, regime), sampling in CARDS.items():
        if family in served and regime == model.regime:
            return sampling
    return FALLBACK
