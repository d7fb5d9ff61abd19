"""protocol.knobs: every knob declared once, and what reads the declarations."""

from __future__ import annotations

import msgspec
import pytest

from protocol.arms.table import Variant
from protocol.config import Knobs
from protocol.knobs import KNOBS, knob_problems, platform_knobs, variants
from scoring.analyses.registry import ANALYSES


def test_every_field_of_the_record_has_one_declaration() -> None:
    assert KNOBS.names() == Knobs.__struct_fields__
    assert all(k.label for k in KNOBS.entries())


def test_the_variant_families_are_the_papers_and_ours() -> None:
    """Pinned: the Holm family each knob's variant contrast joins (Table 16, D.3, 12, 18,
    19; the stress families, ours)."""
    assert variants() == (
        Variant(knob="checklist_mode", table="Table 16"),
        Variant(knob="directive_role", table="Table 16"),
        Variant(knob="matched_step_line", table="Table 16", reference="checklist"),
        Variant(knob="notice", table="Appendix D.3"),
        Variant(knob="binding", table="Table 19"),
        Variant(knob="corruption", table="Table 12"),
        Variant(knob="memory_mode", table="Table 18"),
        Variant(knob="memory_k", table="Table 18"),
        Variant(knob="memory_window", table="Table 18"),
        Variant(knob="spoof", table="Stress: forged state", alone=True, with_knobs=("spoof_dose",)),
        Variant(
            knob="tool_failure",
            table="Stress: tool failure",
            alone=True,
            with_knobs=("tool_failure_landed",),
        ),
        Variant(
            knob="user_style",
            table="Stress: uncooperative user",
            alone=True,
            with_knobs=("user_dose",),
        ),
        Variant(knob="show", table="Ask back and escalation", alone=True),
        Variant(knob="ask", table="Ask back and escalation", alone=True),
        Variant(knob="escalate", table="Ask back and escalation", alone=True),
        Variant(knob="budget", table="Semantics: budget", alone=True),
        Variant(knob="expiry", table="Semantics: expiry", alone=True),
        Variant(
            knob="sessions",
            table="Semantics: sessions",
            alone=True,
            with_knobs=("handoff", "next_model"),
        ),
        Variant(knob="exclusive", table="Semantics: exclusive", alone=True),
    )
    assert set(platform_knobs()) == {"tools", "harness"}


def test_a_section_names_a_report_analysis() -> None:
    sections = [k.section for k in KNOBS.entries() if k.section is not None]
    assert sections and all(s in ANALYSES for s in sections)


@pytest.mark.parametrize(
    ("knobs", "arm", "problem"),
    [
        ({"memory_k": 3, "memory_mode": "augment"}, "raw",
         "memory_mode, memory_k applies to the memory arms only (memory-topk, mem0), not 'raw'"),
        ({"memory_k": 0}, "memory-topk", "memory_k must be at least 1 (got 0)"),
        ({"memory_window": -1}, "mem0", "memory_window must be at least 0 (got -1)"),
        ({"corruption": 1.5}, "enforce", "corruption rate must be in [0, 1] (got 1.5)"),
        ({"tool_failure": 0.2}, "raw", 'tool_failure needs the tool harness (harness = "langgraph")'),
        ({"harness": "langgraph", "spoof": "receipt"}, "raw",
         'spoof = "receipt" runs on the text protocol; the tool harness takes '
         'spoof = "tool_result" only'),
        ({"harness": "langgraph", "tool_failure": 0.1, "tool_failure_landed": 1.5}, "raw",
         "tool_failure_landed must be in [0, 1] (got 1.5)"),
        ({"harness": "langgraph", "tool_failure_landed": 0.5}, "raw",
         "tool_failure_landed needs a tool_failure rate on the same variant"),
        ({"harness": "langgraph"}, "ledger", "the tool harness runs the arms"),
        ({"show": True, "ask": "unresolved"}, "raw",
         "show, ask applies to the gate arms only (directive, enforce, hybrid), not 'raw'"),
        ({"escalate": True}, "directive",
         "escalate applies to the gates that refuse only (enforce, hybrid), not 'directive'"),
        ({"show": True, "matched_step_line": True}, "directive",
         "show and matched_step_line both name the step: set one"),
        ({"budget": 9}, "raw", "budget must be 0 (off) or 1 to 4 runs (got 9)"),
        ({"budget": 2, "user_style": "restate"}, "raw",
         "budget and user_style both take fillers: set one"),
        ({"expiry": 6, "harness": "langgraph"}, "raw",
         "expiry runs on the text protocol: on the tool harness a tool result is an exchange"),
        ({"exclusive": 5}, "raw", "exclusive must be 0 (off) or 1 to 4 requests (got 5)"),
        ({"exclusive": 2, "expiry": 6}, "raw", "expiry and exclusive are one rule each: set one"),
        ({"expiry": 1}, "raw", "expiry must be 0 (off) or 2 to 30 turns (got 1)"),
        ({"expiry": 6, "budget": 2}, "raw", "budget and expiry are one rule each: set one"),
        ({"sessions": 1}, "raw", "sessions must be 0 (off) or 2 to 8 (got 1)"),
        ({"sessions": 3, "budget": 2}, "raw",
         "sessions and budget, expiry or exclusive are one rule each: set one"),
        ({"handoff": "note"}, "raw", "handoff needs sessions on the same variant"),
        ({"next_model": "m"}, "raw", "next_model needs sessions on the same variant"),
    ],
)  # fmt: skip
def test_each_knob_checks_its_own_values(knobs: dict[str, object], arm: str, problem: str) -> None:
    found = knob_problems(msgspec.convert(knobs, Knobs), arm)
    assert any(p.startswith(problem) for p in found), found


def test_the_harness_takes_a_budget_exclusive_steps_and_sessions() -> None:
    for rule in ({"budget": 2}, {"exclusive": 2}, {"sessions": 3, "handoff": "note"}):
        knobs = msgspec.convert({"harness": "langgraph", **rule}, Knobs)
        assert knob_problems(knobs, "enforce") == []


def test_the_harness_takes_a_forged_tool_result_and_landed_timeouts() -> None:
    ok = {"harness": "langgraph", "spoof": "tool_result", "tool_failure": 0.3,
          "tool_failure_landed": 0.5}  # fmt: skip
    assert knob_problems(msgspec.convert(ok, Knobs), "enforce") == []


def test_the_plain_knobs_have_no_problem_on_any_arm() -> None:
    from protocol.arms.table import arm_names

    assert all(knob_problems(Knobs(), a) == [] for a in arm_names())
