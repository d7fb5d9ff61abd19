"""protocol.state.compiled: parsing the compiler's replies, the validator, compile accuracy, and
scoring.results.gate_report: Table 5 and Table 11 aggregates."""

from __future__ import annotations

import json

import msgspec
import pytest

from protocol import EpisodeSpec, generate, strings
from protocol.records import CellKey, CompileRecord, EpisodeRecord, TurnKind, TurnRecord
from protocol.state.compiled import (
    CompiledGraph,
    CompiledRevision,
    CompiledStep,
    code_table,
    compile_accuracy,
    compile_record,
    revised_state,
    validate,
)
from protocol.state.compiled_parse import (
    ECHO_ERROR,
    find_json_object,
    parse_graph,
    parse_match,
    parse_revision,
)
from scoring.results.gate_report import compile_table, matcher_report
from tests.gates_fakes import graph_json, revision_json

EP = generate(EpisodeSpec(seed=100, steps=10, density=0.3))


def test_graph_parses_with_fences_and_prose() -> None:
    body = graph_json(EP)
    for text in (
        body,
        f"```json\n{body}\n```",
        f"Here is the plan:\n```\n{body}\n```\nLet me know.",
        f"Sure! {body} That is all.",
        "Note {not json} first. " + body,
    ):
        g = parse_graph(text)
        assert not g.malformed
        assert g.steps == {s.id: CompiledStep(deps=s.deps, code=s.code) for s in EP.steps}


def test_graph_tolerates_shapes() -> None:
    g = parse_graph(
        '{"steps": {"S2": {"deps": "s1, S3", "code": " RC-1111 "}, "s1": {"deps": null, '
        '"code": 7}, "s3": "oops"}}'
    )
    assert list(g.steps) == ["s1", "s2", "s3"]
    assert g.steps["s2"] == CompiledStep(deps=("s1", "s3"), code="RC-1111")
    assert g.steps["s1"] == CompiledStep(deps=(), code="")
    assert g.steps["s3"] == CompiledStep()
    listed = parse_graph('{"steps": [{"id": "s1", "deps": [], "code": "RC-5678"}]}')
    assert listed.steps == {"s1": CompiledStep(code="RC-5678")}


def test_a_reply_that_echoes_the_prompt_example_is_a_compile_error() -> None:
    """Issue #41: a weak model echoes the prompt's example; that is no compile."""
    example = strings.COMPILER_REVISION_PROMPT.format(steps="", message="")
    echoed = parse_revision(example[example.index('{"cancel"') :])
    assert echoed.malformed and echoed.error == ECHO_ERROR and echoed.cancel is None
    lowered = parse_revision('{"cancel":"sx","rewires":{"sy":["sa","sb"]},"relax":null}')
    assert lowered.error == ECHO_ERROR  # Gemma 3 270M's reply, ids lower-cased
    assert parse_revision('{"cancel":"s2","rewires":{"s4":["s1"]},"relax":null}').error is None
    graph = parse_graph('{"steps": {"s1": {"deps": [], "code": "RC-1234"}}}')
    assert graph.error == ECHO_ERROR and graph.steps == {}
    two = parse_graph('{"steps": {"s1": {"deps": [], "code": "RC-1234"}, "s2": {"deps": ["s1"]}}}')
    assert two.error is None and len(two.steps) == 2


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I cannot do that.",
        '{"steps": {"s1": {"deps": [], "code": "RC-1234"},',  # cut off by the budget
        "{'steps': {}}",
        '{"plan": {"s1": {}}}',
        '{"steps": {}}',
        '{"steps": 3}',
    ],
)
def test_malformed_graph_is_an_empty_graph(text: str) -> None:
    g = parse_graph(text)
    assert g.malformed and g.steps == {}
    v = validate(g, parse_revision(revision_json(EP)))
    assert "malformed" in v.flags and not v.passed


def test_revision_parses() -> None:
    r = parse_revision("```json\n" + revision_json(EP) + "\n```")
    assert r.cancel == EP.revision.cancel
    assert r.rewires == {w: tuple(d) for w, d in EP.revision.rewires.items()}
    assert r.relax == EP.revision.relax
    assert parse_revision('{"cancel": "s2", "rewires": null, "relax": []}') == CompiledRevision(
        cancel="s2"
    )
    bad = parse_revision("no update")
    assert bad.malformed and bad.cancel is None and bad.rewires == {}


def test_find_json_object_needs_the_wanted_key() -> None:
    text = 'prefix {"a": 1} then {"steps": {}}'
    assert find_json_object(text) == {"a": 1}
    assert find_json_object(text, lambda o: "steps" in o) == {"steps": {}}


def test_matcher_reply_validation() -> None:
    ids = ["s1", "s2", "s10"]
    assert parse_match('{"step": "s10", "explicit_redo": false}', ids) == ("s10", False)
    assert parse_match('```json\n{"step": "S2", "explicit_redo": true}\n```', ids) == ("s2", True)
    assert parse_match('Answer: {"step": null, "explicit_redo": false}', ids) == (None, False)
    for bad in (
        "s2",
        '{"step": "s3", "explicit_redo": false}',  # not a listed step
        '{"step": "s2"}',  # flag missing
        '{"step": "s2", "explicit_redo": "true"}',  # not a boolean
        '{"step": "s2", "explicit_redo": false',
    ):
        assert parse_match(bad, ids) is None, bad


def _perfect() -> tuple[CompiledGraph, CompiledRevision]:
    return parse_graph(graph_json(EP)), parse_revision(revision_json(EP))


def test_perfect_compile_passes_and_is_exact() -> None:
    g, r = _perfect()
    v = validate(g, r)
    assert v.passed and v.flags == ()
    acc = compile_accuracy(g, r, EP)
    assert acc.exact and acc.dep == acc.code == acc.steps == 10
    assert code_table(g) == {s.code: s.id for s in EP.steps}
    after = revised_state(g, r)
    assert EP.revision.cancel in after.cancelled


def test_validator_flags_each_defect() -> None:
    g, r = _perfect()
    victim = EP.steps[3].id
    empty = msgspec.structs.replace(
        g, steps={**g.steps, victim: msgspec.structs.replace(g.steps[victim], code="")}
    )
    v = validate(empty, r)
    assert v.flags == ("empty_code",) and v.empty_code == (victim,)
    assert v.paper_flags == ("empty_code",)
    acc = compile_accuracy(empty, r, EP)
    assert acc.code == 9 and acc.dep == 10 and not acc.exact

    # The cancelled step left in its dependents' lists: the revision rewires nothing.
    kept = msgspec.structs.replace(r, rewires={})
    v = validate(g, kept)
    assert v.flags == ("cancelled_in_deps",)
    dependents = {w for w, s in g.steps.items() if EP.revision.cancel in s.deps}
    assert set(v.cancelled_in_deps) == dependents
    assert not compile_accuracy(g, kept, EP).rewire

    # A rewire that closes a cycle.
    s1_dependents = [w for w, s in g.steps.items() if "s4" in s.deps]
    assert s1_dependents
    cyc = msgspec.structs.replace(r, rewires={**r.rewires, "s4": (s1_dependents[0],)})
    v = validate(g, cyc)
    assert "cycle" in v.flags and v.cycle

    unknown = msgspec.structs.replace(r, relax=("s1", "s99"))
    assert validate(g, unknown).flags == ("unknown_dep",)


def test_accuracy_components() -> None:
    g, r = _perfect()
    wrong_cancel = msgspec.structs.replace(r, cancel="s1")
    acc = compile_accuracy(g, wrong_cancel, EP)
    assert not acc.cancel and acc.rewire and acc.relax
    no_relax = msgspec.structs.replace(r, relax=None)
    assert not compile_accuracy(g, no_relax, EP).relax
    data = json.loads(graph_json(EP))
    data["steps"]["s1"]["deps"] = []
    assert compile_accuracy(parse_graph(json.dumps(data)), r, EP).dep == 9


def _record(turns: list[TurnRecord], compile: CompileRecord | None = None) -> EpisodeRecord:
    cell = CellKey(model="m", steps=10, density=0.3, arm="directive")
    return EpisodeRecord(cell=cell, spec=EP.spec, turns=tuple(turns), compile=compile)


def test_helpers_report() -> None:
    def tr(
        i: int, kind: TurnKind, step: str | None, matched: str | None, redo: bool | None
    ) -> TurnRecord:
        return TurnRecord(
            index=i,
            kind=kind,
            step=step,
            work_order=None,
            user_text="",
            matched_step=matched,
            matched_redo=redo,
        )

    turns = [
        tr(0, "filler", None, None, None),
        tr(1, "ask", "s1", "s1", False),
        tr(2, "legit_redo", "s1", "s1", True),
        tr(3, "redo_probe", "s1", "s2", True),  # a wrong step and a false redo flag
        tr(4, "ambiguous", None, None, False),
    ]
    rep = matcher_report([_record(turns)])
    assert rep.turns == 3 and rep.agree == 2
    assert rep.redo_precision == 0.5 and rep.redo_recall == 1.0
    assert rep.ambiguous == 1 and rep.ambiguous_null == 1
    # Table 4 counts ask, premature and redo-probe turns only (not the legitimate redo).
    assert (rep.rewritten_turns, rep.rewritten_agree) == (2, 1)
    assert rep.rewritten_agreement == 0.5

    g, r = _perfect()
    info = compile_record(
        "m", g, r, validate(g, r), compile_accuracy(g, r, EP), enforcing=False, cached=False
    )
    table = compile_table([_record(turns, info), _record(turns, None)])
    assert table.n == 1 and table.dep == 1.0 and table.cancel == 1.0
    assert table.validator_flagged == 0
