"""The airline rule language: parser, validator, evaluation, JSON round trip."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tau2gate import evaluate, parse_rules, rules_to_json
from tau2gate.airline import FACTS, WRITE_TOOLS, compute_facts, facts_for
from tau2gate.compile import compile_prompt, read_compile
from tau2gate.rules import AllOf, AnyOf, Compare, FactRef, Not, Op, Rule, RuleSet
from tests.tau2gate_fixtures import NOW, state


def _doc(*rules: dict[str, Any], now: str | None = NOW) -> str:
    doc: dict[str, Any] = {"rules": list(rules)}
    if now is not None:
        doc["now"] = now
    return json.dumps(doc)


def _rule(deny_when: Any, tool: str = "cancel_reservation", rid: str = "r1") -> dict[str, Any]:
    return {"id": rid, "tool": tool, "deny_when": deny_when, "message": "no"}


def test_a_valid_rule_parses_to_its_typed_form() -> None:
    parsed = parse_rules(
        _doc(_rule({"fact": "reservation.hours_since_booking", "op": "gt", "value": 24}))
    )
    assert parsed.ok
    assert parsed.rules.now == datetime(2030, 1, 5, 12)
    assert parsed.rules.rules == (
        Rule(
            id="r1",
            tool="cancel_reservation",
            deny_when=Compare(fact="reservation.hours_since_booking", op="gt", value=24),
            message="no",
        ),
    )


def test_a_bare_bool_fact_means_true_and_a_bare_number_fact_is_refused() -> None:
    ok = parse_rules(_doc(_rule({"fact": "reservation.any_segment_flown"})))
    assert ok.rules.rules[0].deny_when == Compare(
        fact="reservation.any_segment_flown", op="eq", value=True
    )
    bad = parse_rules(_doc(_rule({"fact": "reservation.passenger_count"})))
    assert bad.rules.rules == ()
    assert "a bare fact must be bool" in bad.errors[0]


BAD_RULES = [
    (_rule({"fact": "reservation.nope"}), "unknown fact"),
    (_rule({"fact": "args.amount", "op": "gt", "value": 1}), "not defined for cancel_reservation"),
    ({"id": "r1", "tool": "get_user_details", "deny_when": {}}, "unknown write tool"),
    (_rule({"fact": "reservation.cabin", "op": "gt", "value": "a"}), "needs a number fact"),
    (_rule({"fact": "reservation.cabin", "op": "eq", "value": 3}), "is not a str"),
    (_rule({"fact": "reservation.cabin", "op": "in", "value": []}), "non-empty list"),
    (_rule({"fact": "reservation.cabin", "op": "like", "value": "x"}), "unknown op"),
    (_rule({"all": []}), "non-empty list"),
    (_rule({"xor": [1]}), "unknown predicate keys"),
    (
        _rule(
            {
                "fact": "reservation.cabin",
                "op": "eq",
                "value": {"fact": "reservation.passenger_count"},
            }
        ),
        "cannot compare",
    ),
    (_rule({"fact": "reservation.passenger_count", "op": "eq", "value": True}), "not a int"),
    ({"id": "", "tool": "cancel_reservation", "deny_when": {}}, "non-empty string"),
    ({**_rule({"fact": "reservation.any_segment_flown"}), "extra": 1}, "unknown keys"),
]


def test_every_invalid_rule_is_dropped_with_an_error_naming_it() -> None:
    for bad, needle in BAD_RULES:
        good = _rule({"fact": "reservation.any_segment_flown"}, rid="good")
        parsed = parse_rules(_doc(good, bad))
        assert [r.id for r in parsed.rules.rules] == ["good"], bad
        assert len(parsed.errors) == 1 and needle in parsed.errors[0], (needle, parsed.errors)


def test_duplicate_ids_keep_the_first_and_report_the_second() -> None:
    rule = _rule({"fact": "reservation.any_segment_flown"})
    parsed = parse_rules(_doc(rule, rule))
    assert len(parsed.rules.rules) == 1
    assert parsed.errors == ("rule 'r1': duplicate id",)


def test_compile_errors_flow_into_the_rule_set_uncorrected() -> None:
    # a missing `now` is reported and left missing: booking ages become undecidable
    parsed = read_compile(
        "Here are the rules:\n```json\n"
        + _doc(
            _rule({"fact": "reservation.hours_since_booking", "op": "gt", "value": 24}), now=None
        )
        + "\n```"
    )
    assert parsed.rules.now is None
    assert parsed.errors == ("'now' is missing: booking ages are undecidable",)
    facts = compute_facts("cancel_reservation", {"reservation_id": "OLD001"}, state(), None)
    assert facts["reservation.hours_since_booking"] is None
    assert not evaluate(parsed.rules.rules[0].deny_when, facts)
    nothing = parse_rules("I cannot compile this policy.")
    assert nothing.rules.rules == () and nothing.errors == ("no JSON object in the compile output",)
    assert parse_rules("[1, 2]").errors == ("no JSON object in the compile output",)


def test_unknown_facts_compare_false_and_not_negates_that() -> None:
    facts = compute_facts("cancel_reservation", {"reservation_id": "ZZZ"}, state(), None)
    assert set(facts.values()) == {None}
    flown = Compare(fact="reservation.any_segment_flown", op="eq", value=True)
    assert not evaluate(flown, facts)
    assert evaluate(Not(item=flown), facts)
    assert not evaluate(Compare(fact="reservation.cabin", op="not_in", value=("x",)), facts)


def test_fact_refs_compare_two_facts() -> None:
    pred = Compare(
        fact="args.total_baggages", op="lt", value=FactRef(fact="reservation.total_baggages")
    )
    args = {"reservation_id": "RT0001", "total_baggages": 2, "nonfree_baggages": 1}
    facts = compute_facts("update_reservation_baggages", args, state(), None)
    assert facts["reservation.total_baggages"] == 3
    assert evaluate(pred, facts)
    facts = compute_facts(
        "update_reservation_baggages", {**args, "total_baggages": 3}, state(), None
    )
    assert not evaluate(pred, facts)


def test_every_fact_is_computed_for_each_of_its_tools() -> None:
    for tool in WRITE_TOOLS:
        names = set(facts_for(tool))
        assert names, tool
        got = compute_facts(tool, {}, state(), None)
        assert set(got) == names
    assert {t for spec in FACTS.values() for t in spec.tools} == set(WRITE_TOOLS)


def test_compile_prompt_lists_every_fact_and_write_tool_and_carries_the_policy() -> None:
    prompt = compile_prompt("  POLICY TEXT  ")
    assert "<policy>\nPOLICY TEXT\n</policy>" in prompt
    for name in FACTS:
        assert f"- {name} (" in prompt
    for tool in WRITE_TOOLS:
        assert tool in prompt
    assert "{" in prompt and "{{" not in prompt


# --- hypothesis: the language's laws -------------------------------------------------------

_TOOL = "update_reservation_flights"
_SPECS = sorted(facts_for(_TOOL).values(), key=lambda s: s.name)


def _literal(kind: str) -> st.SearchStrategy[Any]:
    return {
        "bool": st.booleans(),
        "int": st.integers(-5, 10),
        "float": st.floats(-5, 50, allow_nan=False),
        "str": st.sampled_from(["economy", "business", "basic_economy", "gift_card", "x"]),
    }[kind]


@st.composite
def _compare(draw: st.DrawFn) -> Compare:
    spec = draw(st.sampled_from(_SPECS))
    ordered: list[Op] = ["lt", "le", "gt", "ge"] if spec.type in ("int", "float") else []
    ops: list[Op] = ["eq", "ne", "in", "not_in", *ordered]
    op = draw(st.sampled_from(ops))
    if op in ("in", "not_in"):
        value: Any = tuple(draw(st.lists(_literal(spec.type), min_size=1, max_size=3)))
    else:
        value = draw(_literal(spec.type))
    return Compare(fact=spec.name, op=op, value=value)


_PRED = st.recursive(
    _compare(),
    lambda inner: st.one_of(
        st.builds(lambda xs: AllOf(items=tuple(xs)), st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda xs: AnyOf(items=tuple(xs)), st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda x: Not(item=x), inner),
    ),
    max_leaves=8,
)

_ARGS = st.fixed_dictionaries(
    {
        "reservation_id": st.sampled_from(["OLD001", "BASIC1", "RT0001", "FLOWN1", "NOPE"]),
        "cabin": st.sampled_from(["economy", "business", "basic_economy"]),
        "payment_id": st.sampled_from(["credit_card_1", "gift_card_9", "certificate_1", "x"]),
        "flights": st.lists(
            st.fixed_dictionaries(
                {
                    "flight_number": st.sampled_from(["T100", "T200", "T300", "T400", "T9"]),
                    "date": st.sampled_from(["2030-01-10", "2030-01-12"]),
                }
            ),
            max_size=3,
        ),
    }
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_PRED, min_size=1, max_size=4))
def test_json_round_trip_is_exact(preds: list[Any]) -> None:
    rules = RuleSet(
        rules=tuple(
            Rule(id=f"r{i}", tool=_TOOL, deny_when=p, message=f"m{i}") for i, p in enumerate(preds)
        ),
        now=datetime(2030, 1, 5, 12),
    )
    parsed = parse_rules(rules_to_json(rules))
    assert parsed.ok, parsed.errors
    assert parsed.rules == rules


@settings(max_examples=150, deadline=None)
@given(_PRED, _ARGS)
def test_evaluation_obeys_boolean_laws(pred: Any, args: dict[str, Any]) -> None:
    facts = compute_facts(_TOOL, args, state(), datetime(2030, 1, 5, 12))
    value = evaluate(pred, facts)
    assert evaluate(Not(item=pred), facts) is (not value)
    assert evaluate(AllOf(items=(pred, pred)), facts) is value
    assert evaluate(AnyOf(items=(pred, Not(item=pred))), facts) is True


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["fact", "op", "value", "all", "any", "not", "id", "tool", "x"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_JSONISH, max_size=4))
def test_the_parser_never_raises_and_every_kept_rule_is_well_typed(raw: list[Any]) -> None:
    parsed = parse_rules(json.dumps({"now": NOW, "rules": raw}))
    assert len(parsed.rules.rules) + len(parsed.errors) == len(raw)
    for rule in parsed.rules.rules:
        assert rule.tool in WRITE_TOOLS
        assert parse_rules(rules_to_json(RuleSet(rules=(rule,), now=None))).rules.rules == (rule,)
