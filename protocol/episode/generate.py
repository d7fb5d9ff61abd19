"""The deterministic episode generator (Section 4.1): ``generate(spec) -> Episode``.

An episode is a pure function of its :class:`EpisodeSpec`, ``spec.generator`` included; the
versions, what each changed and the spec check live in :mod:`protocol.episode.versions`; versions 1-2
are built by :mod:`protocol.episode.v1`, versions 3-4 by :mod:`protocol.episode.v3` over the
sampler of :mod:`protocol.episode.sampler`, worded by :mod:`protocol.episode.wording`.
"""

from __future__ import annotations

from protocol.episode.v1 import generate_v1
from protocol.episode.v3 import generate_v3
from protocol.episode.versions import (
    Paraphrases,
    check_spec,
)
from protocol.records import Episode, EpisodeSpec

__all__ = [
    "generate",
]


def generate(spec: EpisodeSpec, paraphrases: Paraphrases | None = None) -> Episode:
    """The episode of ``spec``; same spec (and cache), byte-identical episode."""
    check_spec(spec, paraphrases)
    if spec.generator >= 3:
        return generate_v3(spec, paraphrases)
    return generate_v1(spec, paraphrases)
