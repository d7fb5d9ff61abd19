"""The generator versions, the episode budget, and the spec check (Section 4.1).

An episode is a pure function of its :class:`EpisodeSpec`, ``spec.generator`` included: every
version stays selectable so a log rescores against the episodes it was run on
(:data:`GENERATOR_VERSION` is what new runs use; ``docs/protocol.md``, "Generator versions"):

- 1: the first generator (:mod:`protocol.episode.v1`).
- 2: version 1's episodes; the scripted user drops a deferred step once a planned ask of it
  is served (no double re-ask; :mod:`protocol.user`).
- 3: the paper's graph sampler, revision and two schedule versions
  (:mod:`protocol.episode.sampler`); premature asks use the ask wordings; tier 2 reads the held-out
  cache for asks, premature asks, re-asks and redo probes; ambiguous-probe candidates are
  fillers the scripted user turns into probes on the realized state
  (:mod:`protocol.episode.v3`).
- 4: the revision comes midway in both schedules (the earlier schedule asks the cancelled
  step before it, :func:`protocol.episode.sampler.plan`); ambiguous probes are planned on the
  perfect-play state, the same for every arm (:mod:`protocol.episode.ambiguous`); planned and dynamic
  re-asks use the ask wordings at every tier (issue #27).
- 5: version 4's schedules; every stress knob is a dose on the fixed episode, placed from the
  seed on the perfect-play verdicts (:mod:`protocol.stress.doses`): the uncooperative user's turns
  take the place of fillers or add to a planned ask, forgeries arrive as a forwarded
  third-party message on planned requests with a decoy work order (:mod:`protocol.stress.spoof`),
  tool failures are at most :data:`protocol.stress.tool_failure.MAX_CONSECUTIVE_FAILURES` in a row
  per call; the brief ends with the clause on forwarded text; no stream reads the domain's
  name and templates are drawn by phase rank, so two domains' episodes of a seed share
  their structure (domains pair by seed; issue #37).
- 6: version 5's episodes, byte for byte, with no knob of version 6 set; a stress dose is a
  share of a pool of stress slots the same size for every stress
  (:data:`protocol.stress.doses.DOSE_POOL`), so a dose means the same count of stressed turns
  whatever the stress (capped by its eligible turns; issue #46); the rules beyond one-shot
  state are placed on the episodes from the seed (issue #48): the budget knob's cap of runs on
  one step (:mod:`protocol.stress.budget`), the expiry of a step's run
  (:mod:`protocol.stress.expiry`) and an exclusive pair, a step and an added alternative
  (:mod:`protocol.stress.exclusive`); the sessions knob's boundaries, where the conversation
  restarts (:mod:`protocol.stress.sessions`; the episode's turns unchanged).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocol.domains.known import DIGESTS, POOLS
from protocol.domains.shape import DomainPool
from protocol.records import EpisodeSpec, TurnKind

__all__ = [
    "GENERATOR_VERSION",
    "GENERATOR_VERSIONS",
    "MAX_ATTEMPTS",
    "MAX_STEPS",
    "MIN_STEPS",
    "N_TURNS",
    "TRAP_BUDGET",
    "Paraphrases",
    "SpecError",
    "check_spec",
    "pool_of",
]

GENERATOR_VERSION = 6  # what new runs use
GENERATOR_VERSIONS = (1, 2, 3, 4, 5, 6)  # every version a log can name
N_TURNS = 44
MIN_STEPS = 5
MAX_STEPS = 18
TRAP_BUDGET: dict[TurnKind, int] = {
    "premature": 2,
    "redo_probe": 2,
    "superseded_cue": 1,
    "legit_redo": 1,
}
MAX_ATTEMPTS = 500

# Held-out paraphrases (tier 2): template slug -> kind -> rewrites, each with one "{wo}".
# Versions 1-2: kind "asks" | "premature" | "redo_probes" -> a flat list of rewrites.
# Version 3 on (Appendix A.5, 108 templates x 3 rewrites): kind "asks" | "redo_probes" -> one
# list of three rewrites per template paraphrase (protocol.episode.paraphrases checks it).
Paraphrases = Mapping[str, Mapping[str, Sequence[str | Sequence[str]]]]


class SpecError(ValueError):
    """A spec the generator cannot honour; the message is one line for the user."""


def check_spec(spec: EpisodeSpec, paraphrases: Paraphrases | None = None) -> None:
    if spec.generator not in GENERATOR_VERSIONS:
        raise SpecError(
            f"unknown generator version {spec.generator} (this release knows "
            f"{', '.join(map(str, GENERATOR_VERSIONS))}); rescore with the release that wrote it"
        )
    if spec.schedule is not None and spec.schedule not in ("earlier", "regenerated"):
        raise SpecError(f"unknown schedule {spec.schedule!r}; choose earlier or regenerated")
    if spec.schedule is not None and spec.generator < 3:
        raise SpecError("schedule versions need generator version 3 or later")
    if not MIN_STEPS <= spec.steps <= MAX_STEPS:
        raise SpecError(
            f"steps must be between {MIN_STEPS} and {MAX_STEPS} (got {spec.steps}): "
            f"traps need {MIN_STEPS}, a domain has {MAX_STEPS}"
        )
    if not 0.0 <= spec.density <= 1.0:
        raise SpecError(f"density must be in [0, 1] (got {spec.density})")
    pool = pool_of(spec)
    if spec.generator < 3 and (missing := [t.slug for t in pool.templates if not t.premature]):
        raise SpecError(
            f"domain pack {spec.domain!r} has no premature wordings (template {missing[0]}"
            f"{f' and {len(missing) - 1} more' if len(missing) > 1 else ''}); generators 1-2 "
            "word premature asks with them: add three to each template, or use generator 3 or later"
        )
    if spec.brief not in ("amended", "original"):
        raise SpecError(f"unknown brief {spec.brief!r}; choose amended or original")
    if spec.paraphrase_tier not in (0, 1, 2):
        raise SpecError(f"paraphrase tier must be 0, 1 or 2 (got {spec.paraphrase_tier})")
    if spec.paraphrase_tier == 2 and paraphrases is None:
        raise SpecError("paraphrase tier 2 needs a held-out paraphrase cache file")
    if not 0.0 <= spec.ambiguous_rate <= 1.0:
        raise SpecError(f"ambiguous rate must be in [0, 1] (got {spec.ambiguous_rate})")


def pool_of(spec: EpisodeSpec) -> DomainPool:
    """The loaded pool of ``spec.domain``, the very pack the spec was made with: a file pack
    must be loaded (``--domain-file``) and have the digest the spec records."""
    pool = POOLS.get(spec.domain)
    want = spec.domain_digest if isinstance(spec.domain_digest, str) else None
    if pool is None:
        hint = f" (a file pack, digest {want}: pass its file with --domain-file)" if want else ""
        raise SpecError(f"unknown domain {spec.domain!r}{hint}; loaded: {', '.join(POOLS)}")
    have = DIGESTS.get(spec.domain)
    if have != want:
        raise SpecError(
            f"domain pack {spec.domain!r} changed since the run (the spec's digest {want}, "
            f"the loaded pack's {have}); pass --domain-file with the pack the run used "
            "(its run directory keeps a copy under domains/)"
        )
    return pool
