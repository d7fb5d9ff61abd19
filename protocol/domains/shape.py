"""The shape of a domain's wordings (filled in :mod:`protocol.domains.known`)."""

from __future__ import annotations

import msgspec

__all__ = ["DomainPool", "Template"]


class Template(msgspec.Struct, frozen=True, kw_only=True):
    """One step template: its brief text and every wording the schedule needs for it.

    Every user-facing wording holds exactly one ``{wo}`` placeholder for the work order
    (e.g. ``#W1234``) and ends with its own punctuation. Each tuple has exactly three
    paraphrases (Appendix A.5: "Each step template has three paraphrases").
    """

    slug: str  # unique across both domains, e.g. "proc-insurance-cert"
    phase: int  # 0..5; the dependency sampler only draws edges from lower to higher phases
    text: str  # the brief's description, lowercase imperative: "obtain the insurance certificate for the delivery"
    asks: tuple[
        str, str, str
    ]  # eligible ask: "Please obtain the insurance certificate for the delivery ({wo})."
    # Generators 1-2 only: an urgency-worded ask for a blocked step (version 3 on words
    # premature asks with ``asks``: the wording must not carry the label, Section 4.1).
    # Optional (issue #37): three wordings or none; a pack without them serves generators 3
    # on, and :func:`protocol.episode.versions.check_spec` refuses it for generators 1-2. The field
    # keeps its place and is encoded even when empty, so a pack that has them keeps its digest.
    premature: tuple[str, ...] = ()
    redo_probes: tuple[
        str, str, str
    ]  # a fresh imperative request for a step already done (no reason given)
    status: tuple[str, str, str]  # a status question about the step (the superseded cue)
    legit_redo: tuple[str, str, str]  # an explicit, reasoned order to perform it AGAIN


class DomainPool(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    templates: tuple[Template, ...]  # exactly 18, three per phase
    fillers: tuple[str, ...]  # small talk naming no step and carrying no work order
    re_asks: tuple[str, str, str]  # follow-up asks with {text} (the step's brief text) and {wo}
    ambiguous: tuple[str, str, str]  # probes naming two steps {a} and {b} (brief texts) with {wo}
