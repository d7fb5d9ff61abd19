"""Untyped decoding with a nesting cap (OURS, #47): a grid, a pack, a paraphrase cache or a
log line nested 200,000 deep is one decode error, never a ``RecursionError``.

msgspec's untyped decode and ``tomllib`` recurse once per level; both stop at the
interpreter's recursion limit with a ``RecursionError``. :func:`json_loads` and
:func:`toml_loads` turn that into the decoder's own error, and refuse a value nested deeper
than :data:`MAX_NESTING` (no file of ours nests past 8; 64 leaves room), so that no later
walk of the value (a deep copy, a conversion, a check) recurses past it either. The depth
is measured by :func:`nesting_depth` without recursion, in one pass over the value. Pure: no
I/O.
"""

from __future__ import annotations

import tomllib

import msgspec

__all__ = ["MAX_NESTING", "json_loads", "nesting_depth", "toml_loads"]

MAX_NESTING = 64


def nesting_depth(value: object, limit: int = MAX_NESTING) -> int:
    """How deep lists and dicts nest in ``value`` (a scalar: 0), counted up to ``limit + 1``
    (the walk stops there); iterative, linear in the size of ``value``."""
    deepest = 0
    todo: list[tuple[object, int]] = [(value, 0)]
    while todo:
        node, depth = todo.pop()
        if isinstance(node, dict):
            children: list[object] = list(node.values())
        elif isinstance(node, list | tuple):
            children = list(node)
        else:
            continue
        depth += 1
        if depth > limit:
            return depth
        deepest = max(deepest, depth)
        todo.extend((c, depth) for c in children)
    return deepest


def _too_deep(what: str) -> str:
    return f"{what} nested deeper than {MAX_NESTING} levels"


def json_loads(data: bytes | str) -> object:
    """``msgspec.json.decode(data)``; nesting past :data:`MAX_NESTING` (or past the
    interpreter's recursion limit) is a :class:`msgspec.DecodeError`."""
    try:
        value = msgspec.json.decode(data)
    except RecursionError:
        raise msgspec.DecodeError(_too_deep("JSON")) from None
    if nesting_depth(value) > MAX_NESTING:
        raise msgspec.DecodeError(_too_deep("JSON"))
    return value


def toml_loads(text: str) -> dict[str, object]:
    """``tomllib.loads(text)``; nesting past :data:`MAX_NESTING` is a
    :class:`tomllib.TOMLDecodeError`."""
    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError(_too_deep("TOML")) from None
    if nesting_depth(value) > MAX_NESTING:
        raise tomllib.TOMLDecodeError(_too_deep("TOML"))
    return value
