"""Every number a grid can hold has a ceiling checked at validation (#47), so a new field
cannot slip through: the walk below lists every int and float field of :class:`Grid` (and
every numeric knob of :class:`Knobs`) from the types themselves and asks each for its
ceiling (``runner.grid.ceilings.ceiling_of``, a KnobSpec's ``ceiling``); then a huge value of
each is one line naming the field."""

from __future__ import annotations

from typing import Any

import msgspec
import msgspec.inspect as mi
import pytest

from protocol.config import Knobs
from protocol.knobs import KNOBS, knob_problems, knob_spec
from runner.grid.ceilings import CEILINGS, ceiling_of
from runner.grid.expand import Grid, GridError, parse_grid
from tests.reliability_kit import grid_data

_NUMBERS = (mi.IntType, mi.FloatType)


def _numeric(t: mi.Type) -> bool:
    if isinstance(t, mi.UnionType):
        return any(_numeric(x) for x in t.types)
    return isinstance(t, _NUMBERS)


def numeric_fields(t: mi.Type, path: str = "") -> list[str]:
    """The field patterns of every number under ``t`` (``models[].context``, a dict's values
    as ``.*``), walked from the type, not from a value."""
    if isinstance(t, mi.UnionType):
        return sorted({p for x in t.types for p in numeric_fields(x, path)})
    if _numeric(t):
        return [path]
    if isinstance(t, mi.StructType):
        out: list[str] = []
        for f in t.fields:
            out += numeric_fields(f.type, f"{path}.{f.name}" if path else f.name)
        return out
    if isinstance(t, mi.ListType):
        return numeric_fields(t.item_type, f"{path}[]")
    if isinstance(t, mi.DictType):
        return numeric_fields(t.value_type, f"{path}.*")
    return []


GRID_NUMBERS = numeric_fields(mi.type_info(Grid))
KNOB_NUMBERS = numeric_fields(mi.type_info(Knobs))


def test_the_walk_finds_the_numbers_it_must() -> None:
    assert {"run.concurrency", "decoding.reply_budget.*", "models[].context"} <= set(GRID_NUMBERS)
    assert {"run.variants[].memory_k", "run.variants[].corruption"} <= set(GRID_NUMBERS)
    assert {"memory_k", "budget", "spoof_dose"} <= set(KNOB_NUMBERS)


def test_every_number_of_a_grid_has_a_ceiling() -> None:
    assert [p for p in GRID_NUMBERS if ceiling_of(p) is None] == []


def test_every_numeric_knob_has_a_ceiling() -> None:
    assert [f for f in KNOB_NUMBERS if knob_spec(f).ceiling is None] == []
    assert set(KNOB_NUMBERS) <= set(KNOBS.names())


def _huge(pattern: str) -> Any:
    return 10**20 if pattern.endswith(("concurrency", "context", "attempts", "slot")) else 1e300


def _set(data: dict[str, Any], pattern: str, value: object) -> None:
    """Put ``value`` at ``pattern`` in grid ``data`` (lists get one item, dicts every regime)."""
    head, _, leaf = pattern.rpartition(".")
    node: Any = data
    for part in head.split("."):
        key, listed = part.removesuffix("[]"), part.endswith("[]")
        if listed:
            items = node.setdefault(key, [{}])
            node = items[0] if items else items.append({}) or items[0]
        else:
            node = node.setdefault(key, {})
    if leaf == "*":
        for regime in ("no-think", "thinking"):
            node[regime] = value
    elif leaf.endswith("[]"):
        node[leaf[:-2]] = [value]
    else:
        node[leaf] = value


SETTABLE = [
    p
    for p in GRID_NUMBERS
    if not p.startswith(("run.wordings", "run.graphs", "endpoints", "run.variants"))
]


@pytest.mark.parametrize("pattern", SETTABLE)
def test_a_huge_number_anywhere_is_one_line_naming_it(pattern: str) -> None:
    data = grid_data(seeds="100", arms=("raw",))
    _set(data, pattern, _huge(pattern))
    with pytest.raises(GridError) as refused:
        parse_grid(data, need_keys=False)
    lines = str(refused.value).splitlines()
    named = pattern.split(".")[-1].removesuffix("[]")
    named = pattern.split(".")[-2] if named == "*" else named
    (line,) = lines  # the grid is otherwise valid: this one line
    assert named in line or named.replace("_", " ") in line or named.rstrip("s") in line, line


@pytest.mark.parametrize("field", KNOB_NUMBERS)
def test_a_knob_past_its_ceiling_is_its_one_line(field: str) -> None:
    ceiling = knob_spec(field).ceiling
    assert ceiling is not None
    kind = type(getattr(Knobs(), field))
    for value in (kind(ceiling * 10 + 1), float("nan")):
        knobs = msgspec.structs.replace(Knobs(), **{field: value})
        problems = knob_problems(knobs, "memory-topk" if "memory" in field else "raw")
        (line,) = [p for p in problems if field in p and str(value) in p]
        assert str(value) in line and ("at most" in line or f"{ceiling:g}" in line), line
        if kind is int:
            break  # NaN is a float's


def test_a_variant_knob_past_its_ceiling_in_a_grid() -> None:
    data = grid_data(seeds="100", arms=("raw",))
    data["run"]["variants"] = [{"arm": "memory-topk", "memory_k": 10**12}]
    with pytest.raises(GridError) as refused:
        parse_grid(data, need_keys=False)
    lines = str(refused.value).splitlines()
    assert [ln for ln in lines if "memory_k" in ln] == [
        "grid: memory_k must be at most 1000 (got 1000000000000)"
    ]
    assert "run.concurrency" in CEILINGS
