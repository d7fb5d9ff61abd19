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
    """``spec -> Episode``, generated on first use and kept (a few kB per spec: about 12 KB
    at 5 steps). ``maxsize``: keep at most that many, the least recently used dropped (a
    run's streaming scorer, whose specs come in run order: without it a run of 250,000
    episodes kept every one, #47); None keeps all (an offline rescore, which shares each
    spec across the arms and models of a log). A dropped episode is regenerated when asked
    again, the same (generation is a pure function of the spec), so no score moves."""

    __slots__ = ("_episodes", "maxsize", "paraphrases")

    def __init__(
        self, paraphrases: Paraphrases | None = None, *, maxsize: int | None = None
    ) -> None:
        if maxsize is not None and maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.paraphrases = paraphrases
        self.maxsize = maxsize
        self._episodes: dict[EpisodeSpec, Episode] = {}

    def __len__(self) -> int:
        return len(self._episodes)

    def get(self, spec: EpisodeSpec) -> Episode:
        """The episode of *spec*; raises :class:`protocol.SpecError` for an invalid spec."""
        episodes = self._episodes
        ep = episodes.get(spec)
        if ep is None:
            ep = self._generate(spec)
            if self.maxsize is not None and len(episodes) >= self.maxsize:
                del episodes[next(iter(episodes))]  # the least recently used
            episodes[spec] = ep
        elif self.maxsize is not None:
            episodes[spec] = episodes.pop(spec)  # now the most recently used
        return ep

    def _generate(self, spec: EpisodeSpec) -> Episode:
        if spec.paraphrase_tier == 2 and self.paraphrases is None:
            return generate(msgspec.structs.replace(spec, paraphrase_tier=0))
        return generate(spec, self.paraphrases)
