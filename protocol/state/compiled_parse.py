"""Parsing the compiler's and the matcher's replies into the compiled graph, revision and
match (Section 3.2, Appendices B.2, B.3). Pure functions over strings; no I/O.

Parsing decisions (:func:`parse_graph`, :func:`parse_revision`, :func:`find_json_object`)
-----------------------------------------------------------------------------------------
* The reply may wrap its JSON in a code fence (```json ... ```) and surround it with prose.
  Fenced blocks are tried first, then the whole reply; in each, the first ``{`` at which a
  JSON object decodes *and has the expected key* (``steps`` for the graph; ``cancel``,
  ``rewires`` or ``relax`` for the revision) wins. Nothing else is repaired: single quotes,
  trailing commas or a reply cut off by the budget make the reply malformed.
* A malformed graph reply compiles to an EMPTY graph with ``error`` set; a malformed revision
  reply to a revision that changes nothing, with ``error`` set. Compile errors flow into the
  gate uncorrected (Section 3.2, Appendix B.3): behind an empty graph every matched step is
  unknown to the module (no directive) and no booking names a compiled step, so the
  state-bound enforcement gate refuses nothing (it refuses only a step it holds as
  cancelled, done or blocked) and admits every booking, as the directive gate does; the
  request-bound gate refuses every booking (a code it cannot place). The gate is then inert,
  which ``scoring.results.gate_report`` reports per cell; the validator's ``malformed``
  flag lets the hybrid avoid it (docs/protocol.md, "A failed compile").
* A reply that reproduces the prompt's own example (OURS: a weak model echoes it) is a compile
  error, not a compile: a graph that is exactly the graph prompt's example step (``s1``, no
  deps, ``RC-1234``) or a revision naming any of the revision prompt's placeholder ids
  (``sX``, ``sY``, ``sA``, ``sB``, ``sZ``, ``sD``, which no generated step id can be).
* Step ids are stripped and lower-cased (``"S3"`` -> ``"s3"``); nothing else is rewritten.
  ``deps`` may be a list of ids or one comma-separated string; anything else is no deps.
  ``code`` is kept as written (stripped); a non-string code is the empty code. A step entry
  that is not an object compiles to a step with no deps and the empty code. ``steps`` may
  also be a list of objects carrying an ``id``.
* Budgets (issue #48, OURS; asked only of a brief with a BUDGETS list): an optional
  ``budgets`` object beside ``steps``, id -> whole number of runs (0 to ``MAX_CAP``); other
  entries are dropped, and the validator flags a cap below 1 or an unknown id. A graph reply
  with no ``budgets`` key compiles as before (nothing unset is encoded). An ``expiry`` object
  (step -> turns a run stays valid) is read the same way. An ``exclusive`` list of
  two-element lists of ids (the EXCLUSIVE STEPS pairs) keeps each pair of two distinct ids
  neither of which an earlier pair holds; anything else is dropped.
* Revision: ``cancel`` a step id or null; ``rewires`` an object of id -> deps (else none);
  ``relax`` a two-element list of ids, else none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from protocol import strings
from protocol.state.compiled import CompiledGraph, CompiledRevision, CompiledStep
from protocol.state.machine import sort_ids

__all__ = [
    "ECHO_ERROR",
    "REVISION_EXAMPLE_IDS",
    "find_json_object",
    "parse_graph",
    "parse_match",
    "parse_revision",
]

_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
_SPLIT = re.compile(r"[\s,;]+")


# Brackets nested deeper than this end the search in a chunk: a graph is three levels deep,
# and the bound keeps decoding free of recursion and the search linear (docs/security.md).
MAX_DEPTH = 32
_SPECIAL = re.compile(r'[{}\[\]"\\]')
_SPECIAL_CHARS = frozenset('{}[]"\\')


def _object_spans(chunk: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of every balanced ``{...}`` in ``chunk`` (end exclusive), in order
    of start, found in one string-aware pass (quotes count inside brackets only: prose quotes
    outside any object are text). A closer that matches no opener drops the open brackets;
    nesting past :data:`MAX_DEPTH` ends the pass."""
    spans: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    in_string = escaped = False
    for m in _SPECIAL.finditer(chunk):
        c, at = m.group(), m.start()
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":  # the next character is escaped: skip it if it is special
                escaped = chunk[at + 1 : at + 2] in _SPECIAL_CHARS
            elif c == '"':
                in_string = False
            continue
        if c == '"':
            in_string = bool(stack)
        elif c in "{[":
            if len(stack) >= MAX_DEPTH:
                break
            stack.append((c, at))
        elif c in "}]":
            want = "{" if c == "}" else "["
            if not stack or stack[-1][0] != want:
                stack.clear()
                continue
            _, start = stack.pop()
            if c == "}":
                spans.append((start, at + 1))
    spans.sort()
    return spans


def _dicts(value: object) -> list[dict[str, Any]]:
    """Every object in a decoded value, outer first, in document order (no recursion)."""
    out: list[dict[str, Any]] = []
    todo: list[object] = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, dict):
            out.append(v)
            todo.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            todo.extend(reversed(v))
    return out


def find_json_object(
    text: str, wanted: Callable[[dict[str, Any]], bool] = lambda _: True
) -> dict[str, Any] | None:
    """The first JSON object in ``text`` that ``wanted`` accepts (fenced blocks first): the
    object at the first ``{`` that decodes, or an object nested in one that does, in document
    order. Linear in ``text`` up to the :data:`MAX_DEPTH` bound; never recursive."""
    for chunk in [*(m.group(1) for m in _FENCE.finditer(text)), text]:
        covered = 0  # objects inside a decoded span were visited with it
        for start, end in _object_spans(chunk):
            if start < covered:
                continue
            try:
                obj = _DECODER.decode(chunk[start:end])
            except (json.JSONDecodeError, RecursionError):
                continue
            covered = end
            for found in _dicts(obj):
                if wanted(found):
                    return found
    return None


def _norm_id(x: object) -> str | None:
    return x.strip().lower() if isinstance(x, str) and x.strip() else None


def _ids(x: object) -> tuple[str, ...]:
    if isinstance(x, str):
        x = [p for p in _SPLIT.split(x) if p]
    if not isinstance(x, list | tuple):
        return ()
    return sort_ids(dict.fromkeys(i for i in map(_norm_id, x) if i is not None))


def _step(value: object) -> CompiledStep:
    if not isinstance(value, dict):
        return CompiledStep()
    code = value.get("code")
    return CompiledStep(
        deps=_ids(value.get("deps")), code=code.strip() if isinstance(code, str) else ""
    )


ECHO_ERROR = "the reply reproduces the prompt's own example"


def _graph_example() -> dict[str, CompiledStep]:
    m = re.search(
        r'"(s\d+)": \{"deps": \[\], "code": "(RC-\d{4})"\}', strings.COMPILER_GRAPH_PROMPT
    )
    assert m is not None, "the graph prompt's example step"
    return {m.group(1): CompiledStep(deps=(), code=m.group(2))}


def _revision_example_ids() -> frozenset[str]:
    example = strings.COMPILER_REVISION_PROMPT.format(steps="", message="")
    obj = find_json_object(example, lambda o: "cancel" in o)
    assert obj is not None, "the revision prompt's example"
    ids = {obj["cancel"], *obj["rewires"], *(u for d in obj["rewires"].values() for u in d)}
    return frozenset(i.lower() for i in (*ids, *obj["relax"]))


_GRAPH_EXAMPLE = _graph_example()
REVISION_EXAMPLE_IDS = _revision_example_ids()


def parse_graph(text: str) -> CompiledGraph:
    """The compiler's graph reply as a :class:`CompiledGraph` (never raises)."""
    obj = find_json_object(text, lambda o: "steps" in o)
    if obj is None:
        return CompiledGraph(steps={}, error="no JSON object with a 'steps' key")
    raw = obj["steps"]
    items: Iterable[tuple[object, object]]
    if isinstance(raw, dict):
        items = raw.items()
    elif isinstance(raw, list):
        items = [(e.get("id"), e) for e in raw if isinstance(e, dict)]
    else:
        return CompiledGraph(steps={}, error="'steps' is neither an object nor a list")
    steps: dict[str, CompiledStep] = {}
    for key, value in items:
        v = _norm_id(key)
        if v is not None and v not in steps:
            steps[v] = _step(value)
    if not steps:
        return CompiledGraph(steps={}, error="'steps' is empty")
    if steps == _GRAPH_EXAMPLE:
        return CompiledGraph(steps={}, error=ECHO_ERROR)
    ordered = {v: steps[v] for v in sort_ids(steps)}
    graph = CompiledGraph(steps=ordered)
    if "budgets" in obj:
        graph = msgspec.structs.replace(graph, budgets=_budgets(obj["budgets"]))
    if "expiry" in obj:  # the expiry knob (issue #48): read as the budgets are
        graph = msgspec.structs.replace(graph, expiry=_budgets(obj["expiry"]))
    if "exclusive" in obj:  # the exclusive knob (issue #48)
        graph = msgspec.structs.replace(graph, exclusive=_pairs(obj["exclusive"]))
    return graph


def _pairs(raw: object) -> dict[str, str]:
    """A compiled ``exclusive`` list (issue #48): first id -> second id of each pair of two
    distinct normalized ids that no earlier pair holds; any other entry is left out."""
    out: dict[str, str] = {}
    if not isinstance(raw, list):
        return out
    for pair in raw:
        ids = _relax(pair)
        if ids is None or ids[0] == ids[1]:
            continue
        held = set(out) | set(out.values())
        if not held & set(ids):
            out[ids[0]] = ids[1]
    return out


MAX_CAP = 999  # OURS: the largest cap of runs a compiled budget keeps


def _budgets(raw: object) -> dict[str, int]:
    """A compiled ``budgets`` object (issue #48): step id -> whole number of runs, each id
    normalized as the steps' are; any other entry (not an object, a non-integer or a bool
    cap, or one out of 0..:data:`MAX_CAP`) is left out."""
    if not isinstance(raw, dict):
        return {}
    out: dict[str, int] = {}
    for key, cap in raw.items():
        v = _norm_id(key)
        if v is None or not isinstance(cap, int) or isinstance(cap, bool):
            continue
        if 0 <= cap <= MAX_CAP:
            out[v] = cap
    return {v: out[v] for v in sort_ids(out)}


def _relax(x: object) -> tuple[str, str] | None:
    if isinstance(x, list | tuple) and len(x) == 2:
        a, b = _norm_id(x[0]), _norm_id(x[1])
        if a is not None and b is not None:
            return (a, b)
    return None


def parse_revision(text: str) -> CompiledRevision:
    """The compiler's revision reply as a :class:`CompiledRevision` (never raises)."""
    obj = find_json_object(text, lambda o: bool({"cancel", "rewires", "relax"} & o.keys()))
    if obj is None:
        return CompiledRevision(error="no JSON object with a 'cancel', 'rewires' or 'relax' key")
    raw = obj.get("rewires")
    rewires: dict[str, tuple[str, ...]] = {}
    if isinstance(raw, dict):
        for key, deps in raw.items():
            w = _norm_id(key)
            if w is not None:
                rewires[w] = _ids(deps)
    cancel, relax = _norm_id(obj.get("cancel")), _relax(obj.get("relax"))
    named = {cancel, *rewires, *(u for d in rewires.values() for u in d), *(relax or ())}
    if named & REVISION_EXAMPLE_IDS:
        return CompiledRevision(error=ECHO_ERROR)
    return CompiledRevision(cancel=cancel, rewires=rewires, relax=relax)


def parse_match(text: str, step_ids: Iterable[str]) -> tuple[str | None, bool] | None:
    """The matcher's reply as (step or None, explicit_redo), or None when it is not valid.

    Valid: a JSON object (fences and prose tolerated as for the compiler) whose ``step`` is
    null or one of ``step_ids`` (case and surrounding spaces ignored) and whose
    ``explicit_redo`` is a JSON boolean. A step outside the list, a missing key or a string
    ``"true"`` is invalid: the caller asks once more (Appendix B.2)."""
    obj = find_json_object(text, lambda o: "step" in o)
    if obj is None or not isinstance(obj.get("explicit_redo"), bool):
        return None
    raw = obj["step"]
    if raw is None:
        return None, bool(obj["explicit_redo"])
    step = _norm_id(raw)
    if step is None or step not in set(step_ids):
        return None
    return step, bool(obj["explicit_redo"])
