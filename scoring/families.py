"""Holm families: which contrasts are corrected together (Section 4.2, Appendix D.1).

Every contrast line carries a ``kind`` and a ``family``; Holm adjusts within each
(scoring, family). Kinds, with the paper's evidence (``docs/scoring.md``):

- ``ladder``: adjacent rungs of one configuration. Section 4.2: "Holm-corrected over all
  adjacent contrasts within a scoring"; Table 2 / Table 8 report them per model family.
- ``side``: the self-ledger against the checklist (also the replace-mode checklist) and the
  directive gate (Section 5.2), the hybrid against the enforcement gate (Appendix D.3).
- ``variant``: each knob variant against its paper arm on shared seeds (Table 16).
- ``wording``: held-out phrasing (tier 2) and ambiguous probes against the canonical cell,
  per arm; Table 4: "Holm over the four arms", one family per configuration and stress.
- ``brief``: amended against original brief on one schedule; ``schedule``: the regenerated
  against the earlier schedule under one brief (Tables 13, 14).

``--family`` (:data:`FAMILIES`) picks the grouping of every kind but ``wording``:
``model`` (the paper's default: one model family, both regimes, every graph), ``regime``
(model and regime) or ``table`` (every contrast of the kind in the run together).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import msgspec

from protocol.records import CellKey, Knobs
from scoring.cells import (
    SCORINGS,
    cell_line,
    cell_sort_key,
    config_of,
    group_scores,
    ladder_contrasts,
    paired_contrast,
)
from scoring.lines import ContrastLine, ResultLine
from scoring.replay import EpisodeScore
from scoring.stats import holm

__all__ = ["DEFAULT_FAMILY", "FAMILIES", "apply_families", "cross_contrasts", "score_lines"]

FAMILIES: tuple[str, ...] = ("model", "regime", "table")
DEFAULT_FAMILY = "model"

Cells = Mapping[CellKey, Mapping[int, EpisodeScore]]


def _knob_label(k: Knobs) -> str:
    return ",".join(f"{f}={v}" for f, v in k.changed().items())


def _pairs(cells: Cells) -> list[tuple[str, CellKey, CellKey, str, str]]:
    """(kind, reference cell, compared cell, their labels) for every cross-cell contrast."""
    keys = set(cells)
    out: list[tuple[str, CellKey, CellKey, str, str]] = []

    def has(key: CellKey) -> bool:
        return key in keys

    for key in sorted(keys, key=lambda k: k.slug()):
        plain = msgspec.structs.replace(key, knobs=Knobs())
        if key.knobs != Knobs() and has(plain):
            out.append(("variant", plain, key, key.arm, f"{key.arm}[{_knob_label(key.knobs)}]"))
        if key.arm == "ledger" and key.knobs == Knobs():
            replace = msgspec.structs.replace(
                key, arm="checklist", knobs=Knobs(checklist_mode="replace")
            )
            if has(replace):
                out.append(("side", replace, key, "checklist[replace]", "ledger"))
        if key.paraphrase_tier or key.ambiguous_rate:
            canonical = msgspec.structs.replace(key, paraphrase_tier=0, ambiguous_rate=0.0)
            if has(canonical):
                label = f"{key.arm}[tier={key.paraphrase_tier},amb={key.ambiguous_rate:g}]"
                out.append(("wording", canonical, key, key.arm, label))
        if key.brief == "amended":
            for other in keys:
                if (
                    other.brief == "original"
                    and _resolved(other) == _resolved(key)
                    and _same_but(other, key, "brief", "schedule")
                ):
                    out.append(("brief", other, key, f"{key.arm}[original]", f"{key.arm}[amended]"))
        if _resolved(key) == "regenerated":
            for other in keys:
                if _resolved(other) == "earlier" and _same_but(other, key, "schedule"):
                    out.append(
                        ("schedule", other, key, f"{key.arm}[earlier]", f"{key.arm}[regenerated]")
                    )
    return out


def _resolved(key: CellKey) -> str:
    return key.schedule or ("earlier" if key.brief == "original" else "regenerated")


def _same_but(a: CellKey, b: CellKey, *fields: str) -> bool:
    return msgspec.structs.replace(a, **{f: getattr(b, f) for f in fields}) == b


def cross_contrasts(cells: Cells) -> list[ContrastLine]:
    """Contrasts between cells of different configurations (``p_holm`` left None)."""
    lines: list[ContrastLine] = []
    for kind, ref, key, a, b in _pairs(cells):
        for scoring in SCORINGS:
            line = paired_contrast(key, (a, cells[ref]), (b, cells[key]), scoring, kind)
            if kind == "wording":
                stress = f"tier={key.paraphrase_tier},amb={key.ambiguous_rate:g}"
                line.wording_of = f"{config_of(ref).slug()}|{stress}"
            lines.append(line)
    return lines


def _family_id(line: ContrastLine, family: str) -> str:
    config, kind = line.config, line.kind
    if kind == "wording":
        return f"wording|{line.wording_of!s}"
    if family == "table":
        return kind
    if family == "regime":
        return f"{kind}|{config.model}|{config.regime}"
    return f"{kind}|{config.model}"


def apply_families(contrasts: Sequence[ContrastLine], family: str = DEFAULT_FAMILY) -> None:
    """Set ``family`` and ``p_holm`` on each contrast: Holm within (scoring, family)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown Holm family {family!r}; choose one of {', '.join(FAMILIES)}")
    groups: dict[tuple[str, str], list[ContrastLine]] = {}
    for c in contrasts:
        c.family = _family_id(c, family)
        groups.setdefault((c.scoring, c.family), []).append(c)
    for members in groups.values():
        for c, adjusted in zip(members, holm([c.p for c in members]), strict=True):
            c.p_holm = adjusted


def score_lines(scores: Iterable[EpisodeScore], family: str = DEFAULT_FAMILY) -> list[ResultLine]:
    """Every cell line, then every contrast with Holm within its family (``family`` picks
    the grouping): the offline (``ladder score``) results of a set of episode scores."""
    grouped = group_scores(scores)
    cells: list[ResultLine] = []
    contrasts: list[ContrastLine] = []
    every: dict[CellKey, Mapping[int, EpisodeScore]] = {}
    for config in sorted(grouped, key=lambda c: cell_sort_key(c)):
        members = grouped[config]
        for key in sorted(members, key=cell_sort_key):
            cells.append(cell_line(key, members[key].values()))
            every[key] = members[key]
        contrasts.extend(ladder_contrasts(members))
    contrasts.extend(cross_contrasts(every))
    apply_families(contrasts, family)
    return [*cells, *contrasts]
