"""Holm families as the paper forms them, each named by the table it feeds (Section 4.2,
Appendices D.1, E.1, E.2, E.3; Table 4).

Every contrast line carries a ``kind`` (ladder, side, variant, wording, brief, schedule), the
table it feeds and a ``family``; Holm adjusts within each (scoring, family). The contrasts
themselves are declared in the arm table (:mod:`protocol.arms.table`); the families, under the
default grouping ``paper`` (``docs/scoring.md``, "Holm families"):

- ladder contrasts by the configuration's table: ``Table 8`` (original brief, earlier
  schedule): every adjacent contrast of the scoring together (D.1: "Holm correction is
  applied over all adjacent contrasts within a scoring"); ``Table 15`` (amended brief,
  regenerated schedule; Table 2 shows two of its graphs): per model and regime (E.1: "Holm
  correction over the five thinking cells"); ``Table 17`` (the release domain): per model
  and regime ("Holm-corrected over the three contrasts"); ``Table 14`` (a brief on the other
  brief's schedule: the schedule controls), ``Table 19`` (the tool harness), ``Table 4``
  (a stressed wording) and ``tools knob`` (ours): per model and regime;
- variant and side contrasts by the table the arm table names: ``Table 16`` within model
  over all variant contrasts and the self-ledger against the replace-mode checklist (ten at
  Qwen3-235B); ``Section 5.2`` (the self-ledger against the checklist and the directive
  gate), ``Appendix D.3`` (hybrid; same-turn notice), ``Table 12``, ``Table 18``, ``Table 19``
  and the stress knobs' (ours, ``docs/stress.md``) within model;
- wording contrasts (Table 4: "Holm over the four arms"): one family per configuration and
  stress; brief and schedule contrasts (``Table 14``) within model;
- domain contrasts (``Domains``, ours, issue #37): each arm in one domain against itself in
  another, the rest of the configuration equal, within model. From generator 5 two domains'
  episodes of a seed share their structure (graph, revision, schedule, codes), so the exact
  McNemar test pairs like episodes; on versions 1-4 the pairs are independent episodes of
  one seed (the test stays valid, with less power).

"Within model" joins a model's regimes: the model family is the model's name less a
``-thinking`` / ``-no-think`` suffix naming its regime (the shipped grids name the
Qwen3-235B thinking checkpoint ``qwen3-235b-thinking``). ``--family`` (:data:`FAMILIES`)
picks another grouping for every table but Table 4's wording families: ``model`` (each
table within model family), ``regime`` (within model and regime) or ``table`` (every
contrast of a table in the run together).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import msgspec

from protocol.arms.table import arm_spec
from protocol.config import config_label, model_label
from protocol.knobs import platform_knobs, variants
from protocol.records import CellKey, Knobs
from scoring.replay.episode_score import EpisodeScore
from scoring.results.cells import (
    SCORINGS,
    WinsMemo,
    cell_line,
    cell_sort_key,
    config_of,
    group_scores,
    ladder_contrasts,
    paired_contrast,
)
from scoring.results.lines import ContrastLine, ResultLine
from scoring.results.stats import holm
from scoring.results.trials import Unit

__all__ = [
    "DEFAULT_FAMILY",
    "FAMILIES",
    "ConfigLines",
    "apply_families",
    "cross_contrasts",
    "describe_families",
    "ladder_table",
    "model_family",
    "score_lines",
    "variant_reference",
]

FAMILIES: tuple[str, ...] = ("paper", "model", "regime", "table")
DEFAULT_FAMILY = "paper"

Cells = Mapping[CellKey, Mapping[Unit, EpisodeScore]]
_Pair = tuple[str, str, CellKey, CellKey, str, str]  # kind, table, ref, key, labels

# The ladder table whose paper family spans every configuration of the scoring (D.1); every
# other ladder table's family is per model and regime (E.1, E.3), every other kind's within
# model (Table 16).
_WHOLE_SCORING = "Table 8"


def model_family(key: CellKey) -> str:
    """The model's name less a suffix naming its regime (with the scripted model that served
    it, :func:`protocol.config.model_label`)."""
    name = key.model
    for suffix in (f"-{key.regime}", "-thinking", "-no-think"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return model_label(msgspec.structs.replace(key, model=name))


def _resolved(key: CellKey) -> str:
    return key.schedule or ("earlier" if key.brief == "original" else "regenerated")


def ladder_table(config: CellKey) -> str:
    """The paper table a configuration's ladder feeds."""
    if config.knobs.harness == "langgraph":
        return "Table 19"
    if config.knobs.tools:
        return "tools knob"
    if config.paraphrase_tier or config.ambiguous_rate:
        return "Table 4"
    if config.domain == "release":
        return "Table 17"
    paired = {("original", "earlier"): "Table 8", ("amended", "regenerated"): "Table 15"}
    return paired.get((config.brief, _resolved(config)), "Table 14")


def _knob_label(k: Knobs) -> str:
    return ",".join(f"{f}={v}" for f, v in k.changed().items())


def _variant(key: CellKey) -> tuple[str, CellKey] | None:
    """(table, paper-arm cell) of a knob variant: the variant knobs reset, platform knobs
    kept, the arm replaced where the variant names its paper arm; a stress knob's variant
    (``Variant.alone``) against the same cell with that knob alone reset."""
    changed = key.knobs.changed()
    moved = [v for v in variants() if v.knob in changed]
    if not moved:
        return None
    for v in moved:
        if v.alone:
            reset = {f: getattr(Knobs(), f) for f in (v.knob, *v.with_knobs)}
            return v.table, msgspec.structs.replace(
                key, knobs=msgspec.structs.replace(key.knobs, **reset)
            )
    kept = {f: getattr(key.knobs, f) for f in platform_knobs()}
    arm = next((v.reference for v in moved if v.reference is not None), key.arm)
    return moved[0].table, msgspec.structs.replace(key, arm=arm, knobs=Knobs(**kept))


def variant_reference(key: CellKey) -> CellKey | None:
    """The cell a knob variant's contrast compares ``key`` with (its Holm family's
    reference; None when ``key`` is no variant): the report's tables read it from here so
    a table and its family name one reference (#46)."""
    found = _variant(key)
    return None if found is None else found[1]


def _side_pairs(key: CellKey, has: set[CellKey]) -> list[_Pair]:
    """Side contrasts against a reference with knobs of its own (the replace-mode checklist)."""
    spec = arm_spec(key.arm)
    if spec is None or key.knobs.changed():
        return []
    out: list[_Pair] = []
    for c in spec.contrasts:
        if not c.reference_knobs:
            continue
        knobs = msgspec.convert(dict(c.reference_knobs), Knobs)
        ref = msgspec.structs.replace(key, arm=c.reference, knobs=knobs)
        if ref in has:
            label = f"{c.reference}[{','.join(v for _, v in c.reference_knobs)}]"
            out.append(("side", c.table, ref, key, label, key.arm))
    return out


def _same_but(a: CellKey, b: CellKey, *fields: str) -> bool:
    return msgspec.structs.replace(a, **{f: getattr(b, f) for f in fields}) == b


def _pairs(cells: Cells) -> list[_Pair]:
    """Every cross-cell contrast: (kind, table, reference cell, compared cell, labels)."""
    keys = set(cells)
    out: list[_Pair] = []
    for key in sorted(keys, key=lambda k: k.slug()):
        variant = _variant(key)
        if variant is not None and variant[1] in keys:
            table, ref = variant
            ref_label = ref.arm + (f"[{_knob_label(ref.knobs)}]" if ref.knobs.changed() else "")
            out.append(
                ("variant", table, ref, key, ref_label, f"{key.arm}[{_knob_label(key.knobs)}]")
            )
        out += _side_pairs(key, keys)
        if key.paraphrase_tier or key.ambiguous_rate:
            canonical = msgspec.structs.replace(key, paraphrase_tier=0, ambiguous_rate=0.0)
            if canonical in keys:
                label = f"{key.arm}[tier={key.paraphrase_tier},amb={key.ambiguous_rate:g}]"
                out.append(("wording", "Table 4", canonical, key, key.arm, label))
        if key.brief == "amended":
            for other in keys:
                if (
                    other.brief == "original"
                    and _resolved(other) == _resolved(key)
                    and _same_but(other, key, "brief", "schedule")
                ):
                    labels = (f"{key.arm}[original]", f"{key.arm}[amended]")
                    out.append(("brief", "Table 14", other, key, *labels))
        for other in keys:  # domains (issue #37): from generator 5 paired by seed
            if other.domain < key.domain and _same_but(other, key, "domain"):
                labels = (f"{key.arm}[{other.domain}]", f"{key.arm}[{key.domain}]")
                out.append(("domain", "Domains", other, key, *labels))
        if _resolved(key) == "regenerated":
            for other in keys:
                if _resolved(other) == "earlier" and _same_but(other, key, "schedule"):
                    labels = (f"{key.arm}[earlier]", f"{key.arm}[regenerated]")
                    out.append(("schedule", "Table 14", other, key, *labels))
    return out


def cross_contrasts(cells: Cells) -> list[ContrastLine]:
    """Contrasts between cells of different configurations (``p_holm`` left None)."""
    lines: list[ContrastLine] = []
    memo: WinsMemo = {}
    for kind, table, ref, key, a, b in _pairs(cells):
        for scoring in SCORINGS:
            line = paired_contrast(
                key, (a, cells[ref]), (b, cells[key]), scoring, kind, table, memo
            )
            if kind == "wording":
                stress = f"tier={key.paraphrase_tier},amb={key.ambiguous_rate:g}"
                line.wording_of = f"{config_of(ref).slug()}|{stress}"
            lines.append(line)
    return lines


def _group(kind: str) -> str:
    if kind in ("side", "variant"):
        return "contrasts"
    if kind in ("brief", "schedule"):
        return "brief and schedule"
    return kind


def _family_id(line: ContrastLine, family: str) -> str:
    config = line.config
    table = line.table or ladder_table(config)
    name = f"{table} {_group(line.kind)}"
    if line.kind == "wording":
        return f"{name} | {line.wording_of!s}"
    if family == "paper" and line.kind == "ladder":
        family = "table" if table == _WHOLE_SCORING else "regime"
    elif family == "paper":
        family = "model"
    if family == "table":
        return f"{name} | every model"
    if family == "regime":
        return f"{name} | {model_label(config)} {config.regime}"
    return f"{name} | {model_family(config)}"


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


def describe_families(
    lines: Iterable[ResultLine],
    scoring: str = "strict",
    label: Callable[[CellKey], str] = config_label,
) -> str:
    """Each Holm family of one scoring: its name, size and members (each configuration as
    ``label`` names it: by number at 80 columns)."""
    members: dict[str, list[ContrastLine]] = {}
    for c in lines:
        if isinstance(c, ContrastLine) and c.scoring == scoring and c.family is not None:
            members.setdefault(c.family, []).append(c)
    out = [f"Holm families ({scoring}): {len(members)}"]
    for name, contrasts in members.items():
        n = len(contrasts)
        out.append(f"  {name}: {n} contrast{'' if n == 1 else 's'}")
        # the configuration's label (its slug has no arm and ended in "__", #40)
        out += [f"    {label(c.config)}: {c.a} -> {c.b}" for c in contrasts]
    return "\n".join(out)


_Members = dict[CellKey, dict[Unit, EpisodeScore]]
_Part = tuple[list[ResultLine], list[ContrastLine]]


def _config_cells(members: _Members) -> list[ResultLine]:
    """One configuration's cell lines, in ladder order."""
    return [cell_line(key, members[key].values()) for key in sorted(members, key=cell_sort_key)]


def _config_part(members: _Members) -> _Part:
    """One configuration's cell lines (in ladder order) and its ladder contrasts."""
    return _config_cells(members), ladder_contrasts(members)


def _same(a: _Members, b: _Members) -> bool:
    """The same cells holding the same score objects, in the same order."""
    return list(a) == list(b) and all(
        list(a[k]) == list(b[k])
        and all(x is y for x, y in zip(a[k].values(), b[k].values(), strict=True))
        for k in a
    )


class ConfigLines:
    """:func:`score_lines`' lines of each configuration as last computed, reused while the
    configuration holds the same score objects in the same order (the viewer's overview,
    computed again as its index fills: #50). Its contrasts are copied before the families
    are applied, so lines handed out are never changed afterwards."""

    def __init__(self) -> None:
        self._memo: dict[CellKey, tuple[_Members, _Part]] = {}

    def part(self, config: CellKey, members: _Members) -> _Part:
        hit = self._memo.get(config)
        if hit is None or not _same(hit[0], members):
            hit = members, _config_part(members)
            self._memo = {**self._memo, config: hit}  # replaced, never changed in place
        cells, contrasts = hit[1]
        return cells, [msgspec.structs.replace(c) for c in contrasts]


def score_lines(
    scores: Iterable[EpisodeScore],
    family: str = DEFAULT_FAMILY,
    memo: ConfigLines | None = None,
) -> list[ResultLine]:
    """Every cell line, then every contrast with Holm within its family (``family`` picks
    the grouping): the offline (``ladder score``) results of a set of episode scores.
    ``memo``: the configurations' lines reused where their scores did not change."""
    grouped = group_scores(scores)
    cells: list[ResultLine] = []
    contrasts: list[ContrastLine] = []
    every: dict[CellKey, Mapping[Unit, EpisodeScore]] = {}
    for config in sorted(grouped, key=lambda c: cell_sort_key(c)):
        members = grouped[config]
        lines, paired = memo.part(config, members) if memo is not None else _config_part(members)
        cells += lines
        contrasts += paired
        every.update((key, members[key]) for key in sorted(members, key=cell_sort_key))
    contrasts.extend(cross_contrasts(every))
    apply_families(contrasts, family)
    return [*cells, *contrasts]
