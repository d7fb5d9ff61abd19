"""Regenerating the ground-truth episode of a logged spec, cached by spec.

A grid runs every arm and model of a configuration on the same seeds, so many log lines share
one spec; the cache generates each episode once. A tier-2 spec (held-out paraphrases) needs
the paraphrase cache to regenerate its texts; without it the cache generates the tier-0 twin,
which has the same graph, codes, schedule and work orders (the generator draws wording from
its own stream), and the scorer then checks the logged turns on everything but their texts.
"""

from __future__ import annotations

import msgspec

from protocol.episode.generate import generate
from protocol.episode.versions import Paraphrases
from protocol.records import Episode, EpisodeSpec

__all__ = ["EpisodeCache"]


class EpisodeCache:
    """``spec -> Episode``, generated on first use and kept (a few kB per spec)."""

    __slots__ = ("_episodes", "paraphrases")

    def __init__(self, paraphrases: Paraphrases | None = None) -> None:
        self.paraphrases = paraphrases
        self._episodes: dict[EpisodeSpec, Episode] = {}

    def __len__(self) -> int:
        return len(self._episodes)

    def get(self, spec: EpisodeSpec) -> Episode:
        """The episode of *spec*; raises :class:`protocol.SpecError` for an invalid spec."""
        ep = self._episodes.get(spec)
        if ep is None:
            ep = self._generate(spec)
            self._episodes[spec] = ep
        return ep

    def _generate(self, spec: EpisodeSpec) -> Episode:
        if spec.paraphrase_tier == 2 and self.paraphrases is None:
            return generate(msgspec.structs.replace(spec, paraphrase_tier=0))
        return generate(spec, self.paraphrases)
