"""The retail domain of the gate on a small database of ours: every fact, every reference
rule (a call it denies, and legitimate calls no rule denies), the parser's domain checks, the
compile prompt, the scripted naive agent and compiler, and the rules' policy sentences in
docs/tau2.md."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from openai import OpenAI

from tau2gate import Gate, get_domain, parse_rules, reference_rules, rules_to_json
from tau2gate.adapter.agent import _Dispatcher
from tau2gate.compile import compile_prompt, read_compile
from tau2gate.domain import Value
from tau2gate.domains import DOMAINS, UnknownDomain
from tau2gate.retail import FACTS, WRITE_TOOLS, compute_facts, facts_for
from tau2gate.retail.scripted import REASON, agent_reply
from tau2gate.retail.strings import ONLY_CANCEL
from tau2gate.scripted import AGENT_MODEL, COMPILE_MODEL, ScriptedServer
from tests.tau2gate_retail_fixtures import DB, state

DOCS = Path(__file__).resolve().parents[2] / "docs" / "tau2.md"

PENDING, DELIVERED, MODIFIED = "#W0000001", "#W0000002", "#W0000003"
PROCESSED, CANCELLED, BO_DELIVERED = "#W0000004", "#W0000005", "#W0000006"


def _swap(oid: str, old: list[str], new: list[str], pay: str = "credit_card_1") -> dict[str, Any]:
    return {"order_id": oid, "item_ids": old, "new_item_ids": new, "payment_method_id": pay}


ADDRESS = {
    "address1": "1 Main St",
    "address2": "",
    "city": "Springfield",
    "state": "IL",
    "country": "USA",
    "zip": "12345",
}

# (tool, args, fact, expected value): every retail fact, decided and undecidable.
FACT_CASES: list[tuple[str, dict[str, Any], str, Value]] = [
    ("cancel_pending_order", {"order_id": PENDING}, "order.status", "pending"),
    (
        "modify_pending_order_address",
        {"order_id": MODIFIED},
        "order.status",
        "pending (item modified)",
    ),
    ("cancel_pending_order", {"order_id": "#W9999999"}, "order.status", None),
    ("return_delivered_order_items", {"order_id": DELIVERED}, "order.item_count", 2),
    ("cancel_pending_order", {"order_id": PENDING}, "order.original_payment_source", "credit_card"),
    ("cancel_pending_order", {"order_id": DELIVERED}, "order.original_payment_source", "paypal"),
    ("cancel_pending_order", {"order_id": PENDING}, "order.original_payment_amount", 70.0),
    ("modify_pending_order_payment", {"order_id": MODIFIED}, "order.original_payment_amount", 20.0),
    ("modify_user_address", {"user_id": "ann_1", **ADDRESS}, "user.known", True),
    ("modify_user_address", {"user_id": "nobody_0", **ADDRESS}, "user.known", False),
    (
        "cancel_pending_order",
        {"order_id": PENDING, "reason": "ordered by mistake"},
        "args.reason",
        "ordered by mistake",
    ),
    ("cancel_pending_order", {"order_id": PENDING, "reason": 3}, "args.reason", None),
    (
        "return_delivered_order_items",
        {"order_id": DELIVERED, "item_ids": ["1001", "1001"]},
        "args.item_count",
        2,
    ),
    (
        "return_delivered_order_items",
        {"order_id": DELIVERED, "item_ids": "1001"},
        "args.item_count",
        None,
    ),
    (
        "exchange_delivered_order_items",
        _swap(DELIVERED, ["1001"], ["1002", "1004"]),
        "args.new_item_count",
        2,
    ),
    (
        "return_delivered_order_items",
        {"order_id": DELIVERED, "item_ids": ["1001", "1001"]},
        "args.items_in_order",
        True,
    ),
    (
        "return_delivered_order_items",
        {"order_id": DELIVERED, "item_ids": ["1001"] * 3},
        "args.items_in_order",
        False,
    ),
    (
        "modify_pending_order_items",
        _swap(PENDING, ["2002"], ["2001"]),
        "args.items_in_order",
        False,
    ),
    (
        "modify_pending_order_items",
        _swap(PENDING, ["1001"], ["1002"]),
        "args.new_items_same_product",
        True,
    ),
    (
        "modify_pending_order_items",
        _swap(PENDING, ["1001"], ["2002"]),
        "args.new_items_same_product",
        False,
    ),
    (
        "modify_pending_order_items",
        _swap(PENDING, ["1001"], ["1002", "1004"]),
        "args.new_items_same_product",
        None,
    ),
    (
        "modify_pending_order_items",
        _swap(PENDING, ["9999"], ["1002"]),
        "args.new_items_same_product",
        None,
    ),
    (
        "exchange_delivered_order_items",
        _swap(DELIVERED, ["1001", "1001"], ["1002", "1004"]),
        "args.new_items_available",
        True,
    ),
    (
        "exchange_delivered_order_items",
        _swap(DELIVERED, ["1001"], ["1003"]),
        "args.new_items_available",
        False,
    ),
    (
        "exchange_delivered_order_items",
        _swap(DELIVERED, ["1001"], ["2002"]),
        "args.new_items_available",
        False,
    ),
    (
        "exchange_delivered_order_items",
        _swap(DELIVERED, ["1001"], ["1002"]),
        "args.new_items_differ",
        True,
    ),
    (
        "exchange_delivered_order_items",
        _swap(DELIVERED, ["1001", "1001"], ["1002", "1001"]),
        "args.new_items_differ",
        False,
    ),
    (
        "modify_pending_order_items",
        _swap(PENDING, ["1001", "2001"], ["1004", "2002"]),
        "args.price_difference",
        90.0,
    ),
    (
        "modify_pending_order_items",
        _swap(PENDING, ["1001"], ["1002"]),
        "args.price_difference",
        5.0,
    ),
    (
        "exchange_delivered_order_items",
        _swap(DELIVERED, ["1001"], ["2002"]),
        "args.price_difference",
        None,
    ),
    (
        "modify_pending_order_payment",
        {"order_id": PENDING, "payment_method_id": "gift_card_1"},
        "args.payment_in_profile",
        True,
    ),
    (
        "modify_pending_order_payment",
        {"order_id": PENDING, "payment_method_id": "gift_card_9"},
        "args.payment_in_profile",
        False,
    ),
    (
        "modify_pending_order_payment",
        {"order_id": "#W9999999", "payment_method_id": "gift_card_1"},
        "args.payment_in_profile",
        None,
    ),
    (
        "return_delivered_order_items",
        {"order_id": DELIVERED, "payment_method_id": "paypal_1"},
        "args.payment_source",
        "paypal",
    ),
    (
        "return_delivered_order_items",
        {"order_id": DELIVERED, "payment_method_id": "gift_card_9"},
        "args.payment_source",
        None,
    ),
    (
        "modify_pending_order_payment",
        {"order_id": PENDING, "payment_method_id": "gift_card_1"},
        "args.payment_balance",
        50.0,
    ),
    (
        "modify_pending_order_payment",
        {"order_id": PENDING, "payment_method_id": "paypal_1"},
        "args.payment_balance",
        None,
    ),
    (
        "return_delivered_order_items",
        {"order_id": DELIVERED, "payment_method_id": "paypal_1"},
        "args.payment_is_original",
        True,
    ),
    (
        "return_delivered_order_items",
        {"order_id": DELIVERED, "payment_method_id": "gift_card_1"},
        "args.payment_is_original",
        False,
    ),
    ("return_delivered_order_items", {"order_id": DELIVERED}, "args.payment_is_original", None),
]


@pytest.mark.parametrize(("tool", "args", "fact", "expected"), FACT_CASES)
def test_each_retail_fact(tool: str, args: dict[str, Any], fact: str, expected: Value) -> None:
    assert compute_facts(tool, args, state(), None)[fact] == expected


def test_every_retail_fact_has_a_case_and_is_computed_for_each_of_its_tools() -> None:
    assert {fact for _, _, fact, _ in FACT_CASES} == set(FACTS)
    for tool in WRITE_TOOLS:
        got = compute_facts(tool, {}, state(), None)
        assert set(got) == set(facts_for(tool))
        assert all(value is None for name, value in got.items() if name != "user.known")


@pytest.fixture
def gate() -> Gate:
    parsed = reference_rules("retail")
    assert parsed.ok, parsed.errors
    return Gate(parsed.rules)


# (rule id, tool, args): a call that rule denies (each reference rule has one).
DENIED: list[tuple[str, str, dict[str, Any]]] = [
    ("cancel-not-pending", "cancel_pending_order", {"order_id": PROCESSED, "reason": REASON}),
    ("cancel-not-pending", "cancel_pending_order", {"order_id": MODIFIED, "reason": REASON}),
    ("cancel-reason", "cancel_pending_order", {"order_id": PENDING, "reason": "found it cheaper"}),
    ("address-not-pending", "modify_pending_order_address", {"order_id": MODIFIED, **ADDRESS}),
    (
        "payment-not-pending",
        "modify_pending_order_payment",
        {"order_id": DELIVERED, "payment_method_id": "credit_card_1"},
    ),
    (
        "payment-same-method",
        "modify_pending_order_payment",
        {"order_id": PENDING, "payment_method_id": "credit_card_1"},
    ),
    (
        "payment-not-in-profile",
        "modify_pending_order_payment",
        {"order_id": PENDING, "payment_method_id": "gift_card_9"},
    ),
    (
        "payment-gift-balance",
        "modify_pending_order_payment",
        {"order_id": PENDING, "payment_method_id": "gift_card_1"},
    ),
    ("items-not-pending", "modify_pending_order_items", _swap(MODIFIED, ["1002"], ["1001"])),
    ("items-product-change", "modify_pending_order_items", _swap(PENDING, ["1001"], ["2002"])),
    ("items-unavailable", "modify_pending_order_items", _swap(PENDING, ["1001"], ["1003"])),
    ("items-same-option", "modify_pending_order_items", _swap(PENDING, ["1001"], ["1001"])),
    (
        "items-payment-not-in-profile",
        "modify_pending_order_items",
        _swap(PENDING, ["1001"], ["1002"], "gift_card_9"),
    ),
    (
        "items-gift-balance",
        "modify_pending_order_items",
        _swap(PENDING, ["1001", "2001"], ["1004", "2002"], "gift_card_1"),
    ),
    (
        "exchange-not-delivered",
        "exchange_delivered_order_items",
        _swap(PENDING, ["1001"], ["1002"]),
    ),
    (
        "exchange-product-change",
        "exchange_delivered_order_items",
        _swap(DELIVERED, ["1001"], ["2001"]),
    ),
    (
        "exchange-unavailable",
        "exchange_delivered_order_items",
        _swap(DELIVERED, ["1001"], ["1003"]),
    ),
    (
        "exchange-same-option",
        "exchange_delivered_order_items",
        _swap(DELIVERED, ["1001"], ["1001"]),
    ),
    (
        "exchange-payment-not-in-profile",
        "exchange_delivered_order_items",
        _swap(DELIVERED, ["1001"], ["1002"], "gift_card_9"),
    ),
    (
        "exchange-gift-balance",
        "exchange_delivered_order_items",
        _swap(DELIVERED, ["1001", "1001"], ["1004", "1004"], "gift_card_1"),
    ),
    (
        "return-not-delivered",
        "return_delivered_order_items",
        {"order_id": CANCELLED, "item_ids": ["2001"], "payment_method_id": "gift_card_1"},
    ),
    (
        "return-refund-method",
        "return_delivered_order_items",
        {"order_id": DELIVERED, "item_ids": ["1001"], "payment_method_id": "credit_card_1"},
    ),
]

# Calls the policy allows: no reference rule may deny them.
ALLOWED: list[tuple[str, dict[str, Any]]] = [
    ("cancel_pending_order", {"order_id": PENDING, "reason": "no longer needed"}),
    ("cancel_pending_order", {"order_id": PENDING, "reason": "ordered by mistake"}),
    ("modify_pending_order_address", {"order_id": PENDING, **ADDRESS}),
    ("modify_pending_order_payment", {"order_id": PENDING, "payment_method_id": "paypal_1"}),
    ("modify_pending_order_items", _swap(PENDING, ["1001", "2001"], ["1004", "2002"])),
    ("modify_pending_order_items", _swap(PENDING, ["1001"], ["1002"], "gift_card_1")),
    (
        "exchange_delivered_order_items",
        _swap(DELIVERED, ["1001", "1001"], ["1002", "1004"], "paypal_1"),
    ),
    ("exchange_delivered_order_items", _swap(BO_DELIVERED, ["2001"], ["2002"], "gift_card_9")),
    (
        "return_delivered_order_items",
        {"order_id": DELIVERED, "item_ids": ["1001"], "payment_method_id": "paypal_1"},
    ),
    (
        "return_delivered_order_items",
        {"order_id": DELIVERED, "item_ids": ["1001", "1001"], "payment_method_id": "gift_card_1"},
    ),
    ("modify_user_address", {"user_id": "ann_1", **ADDRESS}),
    ("get_order_details", {"order_id": PROCESSED}),
]


@pytest.mark.parametrize(("rule", "tool", "args"), DENIED)
def test_each_retail_rule_denies_its_violation(
    gate: Gate, rule: str, tool: str, args: dict[str, Any]
) -> None:
    verdict = gate.check(tool, args, state())
    assert rule in verdict.denied_by


@pytest.mark.parametrize(("tool", "args"), ALLOWED)
def test_calls_the_policy_allows_are_admitted(gate: Gate, tool: str, args: dict[str, Any]) -> None:
    assert gate.check(tool, args, state()).admitted


def test_every_retail_rule_has_a_violation_case_and_every_order_tool_a_rule(gate: Gate) -> None:
    ids = {r.id for r in gate.rules.rules}
    assert {rule for rule, _, _ in DENIED} == ids
    assert len(ids) == len(gate.rules.rules) == 21
    assert {r.tool for r in gate.rules.rules} == set(WRITE_TOOLS) - {"modify_user_address"}


def test_an_item_modified_order_is_refused_every_further_change(gate: Gate) -> None:
    """'The agent will not be able to modify or cancel the order anymore': τ²-bench's own
    address and payment tools accept a 'pending (item modified)' order; the rules do not."""
    writes: list[tuple[str, Mapping[str, object]]] = [
        ("cancel_pending_order", {"reason": REASON}),
        ("modify_pending_order_address", ADDRESS),
        ("modify_pending_order_payment", {"payment_method_id": "paypal_1"}),
        (
            "modify_pending_order_items",
            {"item_ids": ["1002"], "new_item_ids": ["1001"], "payment_method_id": "paypal_1"},
        ),
    ]
    for tool, extra in writes:
        assert not gate.check(tool, {"order_id": MODIFIED, **extra}, state()).admitted


def test_the_rules_follow_the_database_they_read(gate: Gate) -> None:
    db = json.loads(json.dumps(DB))
    args = {"order_id": PENDING, "payment_method_id": "gift_card_1"}
    assert gate.check("modify_pending_order_payment", args, state(db)).denied_by == (
        "payment-gift-balance",
    )
    db["users"]["ann_1"]["payment_methods"]["gift_card_1"]["balance"] = 70.0
    assert gate.check("modify_pending_order_payment", args, state(db)).admitted
    db["orders"][PENDING]["status"] = "processed"
    assert gate.check("modify_pending_order_payment", args, state(db)).denied_by == (
        "payment-not-pending",
    )


def test_the_parser_checks_rules_against_the_retail_vocabulary() -> None:
    def doc(tool: str, fact: str) -> str:
        rule = {"id": "r", "tool": tool, "deny_when": {"fact": fact}, "message": "m"}
        return json.dumps({"rules": [rule]})

    ok = parse_rules(doc("return_delivered_order_items", "args.payment_is_original"), "retail")
    assert ok.ok and ok.rules.domain == "retail" and ok.rules.now is None
    airline_tool = parse_rules(doc("cancel_reservation", "args.items_in_order"), "retail")
    assert airline_tool.errors == ("rule 'r': unknown write tool 'cancel_reservation'",)
    airline_fact = parse_rules(
        doc("cancel_pending_order", "reservation.any_segment_flown"), "retail"
    )
    assert airline_fact.errors == ("rule 'r': unknown fact 'reservation.any_segment_flown'",)
    wrong_tool = parse_rules(doc("cancel_pending_order", "args.items_in_order"), "retail")
    assert wrong_tool.errors == (
        "rule 'r': fact 'args.items_in_order' is not defined for cancel_pending_order",
    )
    # the same document in airline: no `now` is an error there, and the tool is unknown
    assert (
        "'now' is missing: booking ages are undecidable"
        in parse_rules(doc("return_delivered_order_items", "args.payment_is_original")).errors
    )


def test_the_retail_reference_rules_round_trip_and_describe() -> None:
    rules = reference_rules("retail").rules
    assert parse_rules(rules_to_json(rules), "retail").rules == rules
    assert "now" not in json.loads(rules_to_json(rules))


def test_the_retail_compile_prompt_lists_every_fact_and_tool_and_asks_for_no_now() -> None:
    prompt = compile_prompt("  RETAIL POLICY  ", "retail")
    assert (
        "retail customer-service policy" in prompt
        and "<policy>\nRETAIL POLICY\n</policy>" in prompt
    )
    assert all(tool in prompt for tool in WRITE_TOOLS)
    assert all(f"- {name} (" in prompt for name in FACTS)
    assert '"now"' not in prompt and "reservation." not in prompt
    assert read_compile(rules_to_json(reference_rules("retail").rules), "retail").ok


def test_the_registry_names_each_domain_once_and_refuses_others() -> None:
    assert set(DOMAINS) == {"airline", "retail", "telecom"}
    assert get_domain().name == "airline" and get_domain("retail").name == "retail"
    with pytest.raises(
        UnknownDomain, match="unknown domain 'banking' \\(one of airline, retail, telecom\\)"
    ):
        get_domain("banking")


def test_the_cli_refuses_an_unknown_domain_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from tau2gate.adapter.cli import main

    assert main(["gold-replay", "--domain", "banking"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown domain 'banking'" in err


def test_the_naive_retail_agent_cancels_without_looking() -> None:
    asked = [{"role": "user", "content": "Please cancel order #W0000004, I changed my mind."}]
    call = {"tool_call": ("cancel_pending_order", {"order_id": "#W0000004", "reason": REASON})}
    assert agent_reply(asked) == call
    told: list[Mapping[str, str | None]] = [
        *asked,
        {"role": "assistant", "content": None},
        {"role": "tool", "content": "ok"},
    ]
    assert "processed" in agent_reply(told)["content"]
    assert agent_reply([{"role": "user", "content": "exchange #W0000002"}]) == {
        "content": ONLY_CANCEL
    }


def test_the_naive_retail_agent_returns_everything_after_one_read() -> None:
    asked = [{"role": "user", "content": "I want to return #W0000001."}]
    assert agent_reply(asked) == {"tool_call": ("get_order_details", {"order_id": PENDING})}
    read = [*asked, {"role": "tool", "content": json.dumps(DB["orders"][PENDING])}]
    args = {"order_id": PENDING, "item_ids": ["1001", "2001"], "payment_method_id": "credit_card_1"}
    assert agent_reply(read) == {"tool_call": ("return_delivered_order_items", args)}
    # the order it names is pending: the rules refuse the return it attempts
    parsed = reference_rules("retail")
    verdict = Gate(parsed.rules).check("return_delivered_order_items", args, state())
    assert verdict.denied_by == ("return-not-delivered",)
    done = [*read, {"role": "tool", "content": "Error: Non-delivered order cannot be returned"}]
    assert "processed" in agent_reply(done)["content"]
    assert "processed" in agent_reply([*asked, {"role": "tool", "content": "not json"}])["content"]


def test_the_scripted_endpoint_serves_the_retail_agent_and_compiler() -> None:
    with ScriptedServer("retail") as server:
        client = OpenAI(base_url=server.base_url, api_key="x")
        reply = client.chat.completions.create(
            model=AGENT_MODEL, messages=[{"role": "user", "content": "cancel #W0000001"}]
        )
        call = reply.choices[0].message.tool_calls[0]  # type: ignore[index]
        assert call.function.name == "cancel_pending_order"  # type: ignore[union-attr]
        compiled = client.chat.completions.create(
            model=COMPILE_MODEL, messages=[{"role": "user", "content": "compile"}]
        )
    parsed = read_compile(compiled.choices[0].message.content or "", "retail")
    assert parsed.ok and parsed.rules == reference_rules("retail").rules


class _Row:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return self.data


def test_enforce_vetoes_a_retail_write_through_the_live_state_reader(gate: Gate) -> None:
    db = SimpleNamespace(
        **{table: {k: _Row(v) for k, v in rows.items()} for table, rows in DB.items()}
    )
    d = _Dispatcher("enforce", gate, SimpleNamespace(db=db))

    def msg(name: str, args: dict[str, Any]) -> Any:
        call = SimpleNamespace(id="c0", name=name, arguments=args, requestor="assistant")
        return SimpleNamespace(tool_calls=[call])

    held = d.hold(msg("cancel_pending_order", {"order_id": PROCESSED, "reason": REASON}))
    assert held is not None and held[0][1].startswith("REFUSED: this cancel_pending_order")
    assert d.hold(msg("cancel_pending_order", {"order_id": PENDING, "reason": REASON})) is None
    assert d.hold(msg("get_order_details", {"order_id": PROCESSED})) is None
    assert (d.log.vetoes, d.log.denied) == (1, ["cancel-not-pending"])


def test_docs_give_each_retail_rule_its_policy_sentence() -> None:
    text = DOCS.read_text("utf-8")
    section = text.split("## Retail")[1].split("\n## ")[0]
    for rule in reference_rules("retail").rules.rules:
        line = next((ln for ln in section.splitlines() if ln.startswith(f"| `{rule.id}`")), "")
        assert line.count('"') >= 2, f"{rule.id}: no quoted policy sentence in docs/tau2.md"


def test_set_judge_points_tau2_benchs_nl_assertion_judge_at_the_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tau2gate.adapter import simulate as run

    nl = SimpleNamespace(DEFAULT_LLM_NL_ASSERTIONS="gpt-4.1", DEFAULT_LLM_NL_ASSERTIONS_ARGS={})
    monkeypatch.setattr(run, "require_tau2", lambda module: nl)
    run.set_judge(run.Endpoint(base_url="http://h:1/v1", model="judge", api_key="k"))
    assert nl.DEFAULT_LLM_NL_ASSERTIONS == "openai/judge"
    assert nl.DEFAULT_LLM_NL_ASSERTIONS_ARGS["api_base"] == "http://h:1/v1"
    with pytest.raises(ValueError, match="unknown evaluation 'db'"):
        run.run_rung(
            "none", reference_rules("retail").rules, [], agent=None, user=None, evaluation="db"
        )


def test_the_check_script_refuses_an_unknown_domain_in_one_line(tmp_path: Path) -> None:
    import subprocess

    script = Path(__file__).resolve().parents[2] / "scripts" / "tau2-check.sh"
    for extra in (["--domain", "banking"], ["--frobnicate"]):
        done = subprocess.run(
            ["bash", str(script), str(tmp_path), *extra], capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
