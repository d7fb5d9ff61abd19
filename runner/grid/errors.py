"""A grid file's problems, each one line for the user: :class:`GridError`, and msgspec's
validation message made one line a user can act on (an unknown key gets a did-you-mean, a
value outside a field's Literal gets the choices)."""

from __future__ import annotations

import difflib
import re

import msgspec

__all__ = ["GridError", "validation_problem"]


class GridError(ValueError):
    """A problem with a grid file; the message is one line for the user."""


_UNKNOWN = re.compile(r"unknown field `([^`]+)`(?: - at `\$\.?([^`]*)`)?")
_ENUM = re.compile(r"Invalid enum value '([^']*)' - at `\$\.?([^`]*)`")


def _struct_at(root: type[msgspec.Struct], path: str) -> type[msgspec.Struct]:
    """The Struct type holding the fields at ``path`` (``run.variants[0]``) of ``root``."""
    node = root
    for part in re.findall(r"[A-Za-z_]+", path):
        sub = _fields(node).get(part)
        while sub is not None and not isinstance(sub, msgspec.inspect.StructType):
            sub = getattr(sub, "item_type", None) or next(
                (t for t in getattr(sub, "types", ()) if isinstance(t, msgspec.inspect.StructType)),
                None,
            )
        if sub is None:
            break
        node = sub.cls
    return node


def _fields(node: type[msgspec.Struct]) -> dict[str, msgspec.inspect.Type]:
    info = msgspec.inspect.type_info(node)
    assert isinstance(info, msgspec.inspect.StructType)
    return {f.name: f.type for f in info.fields}


def _choices(node: msgspec.inspect.Type | None) -> list[str]:
    while node is not None and not isinstance(node, msgspec.inspect.LiteralType):
        node = getattr(node, "item_type", None) or next(
            (t for t in getattr(node, "types", ()) if isinstance(t, msgspec.inspect.LiteralType)),
            None,
        )
    return [str(v) for v in node.values] if node is not None else []


def _table(where: str) -> str:
    return re.sub(r"\[\d+\]", "", where)


def validation_problem(root: type[msgspec.Struct], message: str) -> str:
    """The one line for msgspec's ``message`` about a grid of type ``root``."""
    if m := _UNKNOWN.search(message):
        where = m.group(2) or ""
        hint = difflib.get_close_matches(m.group(1), list(_fields(_struct_at(root, where))), n=1)
        suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
        place = f" in [{_table(where)}]" if where else ""
        return f"unknown {m.group(1)!r}{place}{suggestion}"  # 80 columns with a path (#49)
    if m := _ENUM.search(message):
        parent, _, leaf = _table(m.group(2)).rpartition(".")
        choices = _choices(_fields(_struct_at(root, parent)).get(leaf))
        if choices:
            hint = difflib.get_close_matches(m.group(1), choices, n=1)
            did = f" (did you mean {hint[0]!r}?)" if hint else ""
            place = f"[{parent}] {leaf}" if parent else leaf
            return f"{place}: unknown value {m.group(1)!r}{did}; choose from {', '.join(choices)}"
    return message
