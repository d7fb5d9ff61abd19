"""The telecom domain of the gate on a small database of ours (list tables, as τ²-bench keeps
them): every fact, every reference rule, calls the policy allows, the live list look-up, and
the user steps the gold-replay agent hands to the scripted user."""

from __future__ import annotations

import copy
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import pytest

from tau2gate import DictState, Gate, reference_rules
from tau2gate.adapter.agent import USER_STEPS, _steps
from tau2gate.adapter.live_tables import LiveState
from tau2gate.compile import compile_prompt
from tau2gate.domain import Value
from tau2gate.telecom import FACTS, WRITE_TOOLS, compute_facts, facts_for
from tau2gate.telecom.facts import LIST_KEYS
from tau2gate.telecom.scripted import agent_reply
from tau2gate.telecom.strings import CANNOT_HELP

NOW = datetime(2025, 2, 25, 12, 8)


def _line(lid: str, status: str, end: str | None, roaming: bool = False) -> dict[str, Any]:
    return {
        "line_id": lid,
        "status": status,
        "plan_id": "P1",
        "roaming_enabled": roaming,
        "contract_end_date": end,
    }


DB: dict[str, Any] = {
    "customers": [
        {"customer_id": "C1", "line_ids": ["L1", "L2"], "bill_ids": ["B1", "B2"]},
        {"customer_id": "C2", "line_ids": ["L3"], "bill_ids": ["B3"]},
        {"customer_id": "C3", "line_ids": ["L4"], "bill_ids": ["B4"]},
    ],
    "lines": [
        _line("L1", "Suspended", "2026-01-01"),
        _line("L2", "Active", "2025-01-31", roaming=True),
        _line("L3", "Suspended", "2026-06-30"),
        _line("L4", "Suspended", None),
    ],
    "bills": [
        {"bill_id": "B1", "customer_id": "C1", "status": "Overdue"},
        {"bill_id": "B2", "customer_id": "C1", "status": "Paid"},
        {"bill_id": "B3", "customer_id": "C2", "status": "Awaiting Payment"},
        {"bill_id": "B4", "customer_id": "C3", "status": "Paid"},
    ],
}


def state(db: dict[str, Any] | None = None) -> DictState:
    return DictState(copy.deepcopy(DB if db is None else db), LIST_KEYS)


LINE = {"customer_id": "C1", "line_id": "L1"}

FACT_CASES: list[tuple[str, dict[str, Any], str, Value]] = [
    ("resume_line", LINE, "line.status", "Suspended"),
    ("resume_line", {"customer_id": "C1", "line_id": "L9"}, "line.status", None),
    ("enable_roaming", {"customer_id": "C1", "line_id": "L2"}, "line.roaming_enabled", True),
    ("enable_roaming", LINE, "line.roaming_enabled", False),
    ("resume_line", LINE, "line.contract_ended", False),
    ("resume_line", {"customer_id": "C1", "line_id": "L2"}, "line.contract_ended", True),
    ("resume_line", {"customer_id": "C3", "line_id": "L4"}, "line.contract_ended", None),
    ("suspend_line", LINE, "customer.owns_line", True),
    ("suspend_line", {"customer_id": "C2", "line_id": "L1"}, "customer.owns_line", False),
    ("suspend_line", {"customer_id": "C9", "line_id": "L1"}, "customer.owns_line", None),
    ("resume_line", LINE, "customer.has_overdue_bill", True),
    ("resume_line", {"customer_id": "C3", "line_id": "L4"}, "customer.has_overdue_bill", False),
    (
        "send_payment_request",
        {"customer_id": "C2", "bill_id": "B3"},
        "customer.has_bill_awaiting_payment",
        True,
    ),
    (
        "send_payment_request",
        {"customer_id": "C1", "bill_id": "B1"},
        "customer.has_bill_awaiting_payment",
        False,
    ),
    ("send_payment_request", {"customer_id": "C1", "bill_id": "B2"}, "bill.status", "Paid"),
    ("send_payment_request", {"customer_id": "C1", "bill_id": "B9"}, "bill.status", None),
    ("send_payment_request", {"customer_id": "C1", "bill_id": "B1"}, "bill.of_customer", True),
    ("send_payment_request", {"customer_id": "C1", "bill_id": "B3"}, "bill.of_customer", False),
    ("refuel_data", {**LINE, "gb_amount": 2}, "args.gb_amount", 2.0),
    ("refuel_data", {**LINE, "gb_amount": "2"}, "args.gb_amount", None),
]


@pytest.mark.parametrize(("tool", "args", "fact", "expected"), FACT_CASES)
def test_each_telecom_fact(tool: str, args: dict[str, Any], fact: str, expected: Value) -> None:
    assert compute_facts(tool, args, state(), NOW)[fact] == expected


def test_every_telecom_fact_has_a_case_and_is_computed_for_each_of_its_tools() -> None:
    assert {fact for _, _, fact, _ in FACT_CASES} == set(FACTS)
    for tool in WRITE_TOOLS:
        got = compute_facts(tool, {}, state(), NOW)
        assert set(got) == set(facts_for(tool)) and all(v is None for v in got.values())


def test_a_contract_end_needs_the_rule_sets_now() -> None:
    args = {"customer_id": "C1", "line_id": "L2"}
    assert compute_facts("resume_line", args, state(), None)["line.contract_ended"] is None


@pytest.fixture
def gate() -> Gate:
    parsed = reference_rules("telecom")
    assert parsed.ok, parsed.errors
    assert parsed.rules.now == NOW
    return Gate(parsed.rules)


DENIED: list[tuple[str, str, dict[str, Any]]] = [
    ("payment-request-not-overdue", "send_payment_request", {"customer_id": "C1", "bill_id": "B2"}),
    (
        "payment-request-one-awaiting",
        "send_payment_request",
        {"customer_id": "C2", "bill_id": "B3"},
    ),
    ("resume-unpaid", "resume_line", LINE),
    ("resume-unpaid", "resume_line", {"customer_id": "C2", "line_id": "L3"}),
    ("resume-contract-ended", "resume_line", {"customer_id": "C1", "line_id": "L2"}),
    ("refuel-max", "refuel_data", {**LINE, "gb_amount": 2.5}),
]

ALLOWED: list[tuple[str, dict[str, Any]]] = [
    ("send_payment_request", {"customer_id": "C1", "bill_id": "B1"}),
    ("resume_line", {"customer_id": "C3", "line_id": "L4"}),
    ("refuel_data", {**LINE, "gb_amount": 2}),
    ("enable_roaming", LINE),
    ("disable_roaming", {"customer_id": "C1", "line_id": "L2"}),
    ("suspend_line", {"customer_id": "C1", "line_id": "L2", "reason": "travel"}),
]


@pytest.mark.parametrize(("rule", "tool", "args"), DENIED)
def test_each_telecom_rule_denies_its_violation(
    gate: Gate, rule: str, tool: str, args: dict[str, Any]
) -> None:
    assert rule in gate.check(tool, args, state()).denied_by


@pytest.mark.parametrize(("tool", "args"), ALLOWED)
def test_telecom_calls_the_policy_allows_are_admitted(
    gate: Gate, tool: str, args: dict[str, Any]
) -> None:
    assert gate.check(tool, args, state()).admitted


def test_every_telecom_rule_has_a_case(gate: Gate) -> None:
    assert {rule for rule, _, _ in DENIED} == {r.id for r in gate.rules.rules}


def test_paying_the_bill_lifts_the_resume_rule(gate: Gate) -> None:
    db = copy.deepcopy(DB)
    assert not gate.check("resume_line", LINE, state(db)).admitted
    db["bills"][0]["status"] = "Paid"
    assert gate.check("resume_line", LINE, state(db)).admitted


class _Row:
    def __init__(self, data: dict[str, Any]) -> None:
        self.__dict__.update(data)
        self.data = data

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return self.data


def test_the_live_reader_finds_rows_of_list_tables_by_their_key_field(gate: Gate) -> None:
    db = SimpleNamespace(**{t: [_Row(r) for r in rows] for t, rows in DB.items()})
    live = LiveState(lambda: db, LIST_KEYS)
    assert live.row("lines", "L3") == DB["lines"][2]
    assert live.row("lines", "L9") is None and live.row("nothing", "L1") is None
    assert gate.check("resume_line", LINE, live).denied_by == ("resume-unpaid",)


def test_the_compile_prompt_asks_for_now_and_the_scripted_agent_never_writes() -> None:
    prompt = compile_prompt("P", "telecom")
    assert "telecom customer-service policy" in prompt and '"now"' in prompt
    assert all(f"- {name} (" in prompt for name in FACTS)
    assert agent_reply([{"role": "user", "content": "resume line L1"}]) == {"content": CANNOT_HELP}


def test_user_steps_parse_and_skip_what_is_malformed() -> None:
    steps: list[dict[str, Any]] = [
        {"name": "toggle_airplane_mode", "arguments": {}},
        {"name": "reboot_device"},
    ]
    text = (
        USER_STEPS
        + '[{"name": "toggle_airplane_mode", "arguments": {}}, {"name": "reboot_device"}, 3, {"name": 1}, {"name": "x", "arguments": []}]'
    )
    assert _steps(text[len(USER_STEPS) :]) == [
        {"name": s["name"], "arguments": s.get("arguments", {})} for s in steps
    ]
    assert _steps("not json") == [] and _steps('{"name": "x"}') == []


def test_docs_give_each_telecom_rule_its_policy_sentence() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "tau2.md").read_text("utf-8")
    section = text.split("## Telecom")[1].split("\n## ")[0]
    for rule in reference_rules("telecom").rules.rules:
        line = next((ln for ln in section.splitlines() if ln.startswith(f"| `{rule.id}`")), "")
        assert line.count('"') >= 2, f"{rule.id}: no quoted policy sentence in docs/tau2.md"
