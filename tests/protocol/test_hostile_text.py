"""Model text parsed in linear time and without recursion (#36): the hostile replies that
took seconds (quadratic) or raised RecursionError now parse to nothing, and well-formed
replies parse as they did."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from protocol.state.compiled_parse import (
    _FENCE,
    MAX_DEPTH,
    find_json_object,
    parse_graph,
    parse_match,
)
from protocol.state.receipts import find_actions
from protocol.visible import one_line, visible

_OLD = json.JSONDecoder()


def _old_find(text: str, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    """The quadratic search this replaced (every '{' tried with raw_decode), the reference on
    texts it can parse: fenced blocks first, then the whole text, as both searches read it
    (a key or string holding three backticks opens a fence)."""
    for chunk in [*(m.group(1) for m in _FENCE.finditer(text)), text]:
        start = chunk.find("{")
        while start >= 0:
            try:
                obj, _ = _OLD.raw_decode(chunk, start)
            except json.JSONDecodeError:
                obj = None
            if isinstance(obj, dict) and wanted(obj):
                return obj
            start = chunk.find("{", start + 1)
    return None


def test_a_deep_bracket_flood_is_no_graph_and_no_recursion_error() -> None:
    graph = parse_graph('{"steps": ' + "[" * 100_000)
    assert graph.steps == {} and graph.error
    assert find_json_object("{" * 200_000) is None
    assert find_json_object('{"a": ' * 100_000) is None


def test_nesting_up_to_the_bound_still_parses() -> None:
    inner = {"steps": {"s1": {"deps": [], "code": "RC-1000"}}}
    deep: Any = inner
    for _ in range(MAX_DEPTH - 4):
        deep = {"wrap": deep}
    assert find_json_object(json.dumps(deep), lambda o: "steps" in o) == inner


def test_an_action_flood_parses_to_no_action() -> None:
    assert find_actions('ACTION {"tool": ' * 60_000) == []
    assert find_actions("ACTION {" * 100_000) == []
    assert find_actions("ACTION " + "[" * 100_000) == []
    assert find_actions('ACTION {"tool": ' + "[" * 100_000) == []


def test_actions_next_to_a_flood_are_still_found() -> None:
    good = 'ACTION {"tool": "book_room", "work_order": "WO-1234"}'
    found = find_actions("ACTION {" * 1000 + "\n" + good)
    assert [a.tool for a in found] == ["book_room"]


def test_prose_quotes_and_fences_around_the_object() -> None:
    text = 'He said "use {braces}". ```json\n{"step": "s2", "explicit_redo": false}\n```'
    assert parse_match(text, ["s1", "s2"]) == ("s2", False)
    nested = 'note {"meta": {"step": null, "explicit_redo": true}} end'
    assert parse_match(nested, ["s1"]) == (None, True)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)
_prose = st.text(alphabet=st.sampled_from("ab {}[]:,\n"), max_size=12)


@settings(max_examples=300, deadline=None)
@given(_prose, st.dictionaries(st.sampled_from(["steps", "x", "y"]), _json, max_size=3), _prose)
@example("", {"steps": [{"```": {}}, {"```": None}]}, "")  # a fence inside the keys (CI's draw)
def test_the_linear_search_finds_what_the_quadratic_one_did(
    before: str, obj: dict[str, Any], after: str
) -> None:
    text = before + json.dumps(obj) + after
    for wanted in (lambda o: "steps" in o, lambda o: True):
        old = _old_find(text, wanted)
        if old is not None and obj is not None:
            assert find_json_object(text, wanted) == old, text


def test_escapes_are_shown_never_obeyed() -> None:
    hostile = "\x1b]0;pwned\x07\x1b[2J\x1b[31mRED\x1b[0m\u202eevil\r\nnext\x9b"
    shown = visible(hostile)
    assert shown == "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mRED\\x1b[0m\\u202eevil\\x0d\nnext\\x9b"
    assert "\n" not in one_line(hostile) and "\x1b" not in one_line(hostile)
    assert len(one_line("x" * 1000, 50)) == 50
    assert visible("tab\tand\nnewline") == "tab\tand\nnewline"
