"""Flat views of cell keys and row Structs, for JSON lines a query engine reads as columns.

A cell key nests its variant knobs (``CellKey.knobs``); :func:`flat_cell` lifts every knob to
the top level beside the other key fields, so DuckDB's ``read_json_auto`` or pandas'
``read_json(lines=True)`` see one column per field. :func:`flat_row` does the same for a row
Struct and its cell (cost rows, episode rows): the cell's fields come first, then the row's
own (nested ones lifted to prefixed columns), and ``type`` names the row kind. Pure.
"""

from __future__ import annotations

import msgspec

from protocol.config import model_label
from protocol.records import CellKey, Knobs

__all__ = ["CELL_FIELDS", "flat_cell", "flat_row"]

# The flat cell columns, in order: the key's own fields (knobs excluded), then every knob.
CELL_FIELDS: tuple[str, ...] = (
    *(f for f in CellKey.__struct_fields__ if f != "knobs"),
    *Knobs.__struct_fields__,
)


def flat_cell(key: CellKey) -> dict[str, object]:
    """The cell key as one flat mapping: ``arm``, ``model``, ``label`` (the model as the
    tables show it, ``qwen3-235b <- scripted/synthetic``), ..., then each knob."""
    out: dict[str, object] = {}
    for k, v in msgspec.structs.asdict(key).items():
        out[k] = v
        if k == "model":  # beside it, the model as every table shows it (#49)
            out["label"] = model_label(key)
    out.pop("knobs")
    out.update(msgspec.structs.asdict(key.knobs))
    return out


def flat_row(kind: str, cell: CellKey, row: msgspec.Struct) -> dict[str, object]:
    """``{"type": kind, <cell's fields>, <the row's fields but its cell>}``; a nested
    Struct field is lifted to ``<field>_<key>`` columns (``wall_s`` -> ``wall_s_p95``)."""
    fields: dict[str, object] = msgspec.to_builtins(row)
    fields.pop("cell", None)
    out: dict[str, object] = {"type": kind, **flat_cell(cell)}
    for name, value in fields.items():
        if isinstance(value, dict):
            out.update({f"{name}_{k}": v for k, v in value.items()})
        else:
            out[name] = value
    return out
