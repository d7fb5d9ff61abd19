"""Which wording a scripted request carries: template paraphrases (tiers 0 and 1) or the
held-out cache (tier 2), per generator version (Appendix A.5)."""

from __future__ import annotations

from collections.abc import Sequence

from protocol.domains.shape import Template
from protocol.episode.versions import Paraphrases, SpecError
from protocol.records import TurnKind

__all__ = ["pick_wording", "wording_v1", "wording_v3"]

_WORDINGS: dict[TurnKind, str] = {
    "ask": "asks",
    "premature": "premature",
    "redo_probe": "redo_probes",
    "superseded_cue": "status",
    "legit_redo": "legit_redo",
}


def wording_v1(
    t: Template, kind: TurnKind, idx: int, tier: int, paraphrases: Paraphrases | None
) -> str:
    """Versions 1 and 2: each kind its own template field (re-asks use the re-ask frames)."""
    return pick_wording(t, _WORDINGS[kind], idx, tier, paraphrases)


def pick_wording(
    t: Template, field: str, idx: int, tier: int, paraphrases: Paraphrases | None
) -> str:
    """Paraphrase ``idx`` of a template field, rotated by one at tier 1; a version-1 (flat)
    held-out cache at tier 2."""
    if tier == 2 and paraphrases is not None and field in ("asks", "premature", "redo_probes"):
        held_out = paraphrases.get(t.slug, {}).get(field)
        if held_out:
            return str(held_out[idx % len(held_out)])
    options: Sequence[str] = getattr(t, field)
    return options[(idx + (1 if tier == 1 else 0)) % len(options)]


# Version 3 on: premature asks and re-asks are asks (Appendix A.5 counts 108 templates: 54 asks
# and 54 redo probes, A.3), so they share the ask wordings; the status and legitimate-redo
# wordings are not rewritten at tier 2 (A.5: "every ask, premature probe, and redo probe").
_WORDINGS_V3: dict[TurnKind, str] = {**_WORDINGS, "premature": "asks", "re_ask": "asks"}


def wording_v3(
    t: Template,
    kind: TurnKind,
    idx: int,
    rewrite: int,
    tier: int,
    paraphrases: Paraphrases | None,
    *,
    reask_frames: bool,
) -> str | None:
    """The turn's wording. With ``reask_frames`` (version 3) a tier-0/1 re-ask gets None (it
    keeps the re-ask frames); version 4 words it as an ask, so nothing in its wording marks it
    as the follow-up of a premature ask (Section 4.1: "so position carries no label
    information")."""
    field = _WORDINGS_V3[kind]
    if tier == 2 and paraphrases is not None and field in ("asks", "redo_probes"):
        try:
            group = paraphrases[t.slug][field][idx]
            if isinstance(group, str):  # a version-1 (flat) cache
                raise TypeError(group)
            return str(group[rewrite])
        except (KeyError, IndexError, TypeError):
            raise SpecError(
                f"the paraphrase cache has no {field} rewrite {idx}.{rewrite} for {t.slug}; "
                "check it with protocol.episode.paraphrases.check_paraphrases"
            ) from None
    if kind == "re_ask" and reask_frames:
        return None
    return pick_wording(t, field, idx, tier, None)
