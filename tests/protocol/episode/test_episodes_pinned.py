"""Every generator version's episodes, pinned: the SHA-256 of the JSON encodings of a fixed
set of specs per version (both built-in domains, both briefs, both schedules, ambiguous
probes, paraphrase tiers 0-1). An episode is a pure function of its spec; a change that
moves one needs a new generator version (logs name theirs and rescore to their old
scores), never an edit of an old one. The digests were taken at 3c2adba, before #50's
eleventh round counted the trap gaps as runs (the same episodes since)."""

from __future__ import annotations

import hashlib

import msgspec
import pytest

from protocol.config import Brief
from protocol.episode.generate import generate
from protocol.records import EpisodeSpec, Schedule

_SHAPES: tuple[tuple[int, float], ...] = ((5, 0.15), (10, 0.15), (15, 0.3), (18, 0.5))
_VARIANTS: tuple[tuple[Brief, Schedule | None, float], ...] = (
    ("amended", None, 0.0),
    ("original", None, 0.25),
    ("amended", "earlier", 0.5),
)

PINNED = {  # generator version -> digest
    1: "74d39ef149e04cad36afcfde65be6110ed5a65657de15e10f352162293e252f8",
    3: "1d9010e81f812ffaf7f027bb281eeec46f3c9a54e2dc582c96e94ead1d4b23e7",
    4: "a08815be8585eec65e92f350b127b211cc61038aad70c92cf65095a5a09b6210",
    5: "fe515bbd414a214871f837fb02ebd4d256ce49519a96d861c9eaf44a5f3bf973",
    6: "fec2abe94a04d2cf39ad59f00dbc8d54cbb46875cb2c8f73c4ea9e2e56db77b2",
}


def _digest(generator: int) -> str:
    h = hashlib.sha256()
    for seed in range(6):
        for steps, density in _SHAPES:
            for domain in ("procurement", "release"):
                for brief, schedule, rate in _VARIANTS:
                    spec = EpisodeSpec(
                        seed=seed,
                        steps=steps,
                        density=density,
                        domain=domain,
                        brief=brief,
                        schedule=schedule if generator >= 3 else None,  # from version 3
                        ambiguous_rate=rate,
                        generator=generator,
                        paraphrase_tier=seed % 2,
                    )
                    h.update(msgspec.json.encode(generate(spec)))
    return h.hexdigest()


@pytest.mark.parametrize("generator", sorted(PINNED))
def test_episodes_are_pinned(generator: int) -> None:
    assert _digest(generator) == PINNED[generator]
