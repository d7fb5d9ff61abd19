"""The gate under our reference rules on a hand-built database, and the rungs of Table 20."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tau2gate import RUNGS, DictState, Gate, parse_rules, reference_rules, rules_shown
from tau2gate.strings import ADVISORY_NOTICE, VETO
from tests.tau2gate_fixtures import DB, NOW, state


@pytest.fixture(scope="module")
def gate() -> Gate:
    parsed = reference_rules()
    assert parsed.ok, parsed.errors
    return Gate(msgspec.structs.replace(parsed.rules, now=datetime.fromisoformat(NOW)))


def _denied(gate: Gate, tool: str, **args: Any) -> tuple[str, ...]:
    return gate.check(tool, args, state()).denied_by


def test_the_reference_rules_validate_and_cover_every_write_tool() -> None:
    parsed = reference_rules()
    assert parsed.ok, parsed.errors
    assert parsed.rules.now == datetime(2024, 5, 15, 15)
    assert len(parsed.rules.rules) == 15
    assert {r.tool for r in parsed.rules.rules} == {
        "book_reservation",
        "cancel_reservation",
        "send_certificate",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
    }


@pytest.mark.parametrize(
    ("rid", "denied"),
    [
        ("OLD001", ("cancel-ineligible",)),  # economy, no insurance, booked 4 days ago
        ("NEW001", ()),  # booked 23 hours ago
        ("CXL001", ()),  # its flight was cancelled by the airline
        ("BIZ001", ()),  # business class
        ("INS001", ()),  # travel insurance
        ("FLOWN1", ("cancel-flown",)),  # business, but the segment has landed
        # unknown reservation: every fact is undecidable, so the eligibility disjunction is
        # false and its negation denies (the tool would error anyway)
        ("NOPE01", ("cancel-ineligible",)),
    ],
)
def test_cancellation_eligibility(gate: Gate, rid: str, denied: tuple[str, ...]) -> None:
    assert _denied(gate, "cancel_reservation", reservation_id=rid) == denied


def test_the_24_hour_window_is_measured_from_the_rule_sets_now(gate: Gate) -> None:
    db = msgspec.json.decode(msgspec.json.encode(DB))
    db["reservations"]["OLD001"]["created_at"] = "2030-01-04T12:00:00"  # exactly 24 h
    assert gate.check("cancel_reservation", {"reservation_id": "OLD001"}, DictState(db)).admitted
    db["reservations"]["OLD001"]["created_at"] = "2030-01-04T11:59:59"
    verdict = gate.check("cancel_reservation", {"reservation_id": "OLD001"}, DictState(db))
    assert verdict.denied_by == ("cancel-ineligible",)


def _legs(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"flight_number": n, "date": d} for n, d in pairs]


def test_flight_changes(gate: Gate) -> None:
    same = _legs(("T100", "2030-01-10"))
    other = _legs(("T300", "2030-01-10"), ("T400", "2030-01-10"))  # AAA -> CCC -> BBB

    def check(**a: object) -> tuple[str, ...]:
        return _denied(gate, "update_reservation_flights", **a)

    assert check(reservation_id="BASIC1", cabin="economy", flights=same, payment_id="x") == ()
    assert check(
        reservation_id="BASIC1", cabin="basic_economy", flights=other, payment_id="credit_card_1"
    ) == ("modify-basic-economy",)
    assert (
        check(reservation_id="OLD001", cabin="economy", flights=other, payment_id="credit_card_1")
        == ()
    )
    assert check(
        reservation_id="OLD001", cabin="economy", flights=other, payment_id="certificate_1"
    ) == ("modify-payment",)
    assert check(
        reservation_id="OLD001",
        cabin="economy",
        flights=_legs(("T300", "2030-01-10")),
        payment_id="gift_card_1",
    ) == ("modify-route",)
    assert check(
        reservation_id="FLOWN1",
        cabin="economy",
        flights=_legs(("T100", "2030-01-02")),
        payment_id="credit_card_1",
    ) == ("cabin-after-flown",)


def test_round_trip_route_keeps_origin_and_destination(gate: Gate) -> None:
    def check(flights: list[dict[str, str]]) -> tuple[str, ...]:
        return _denied(
            gate,
            "update_reservation_flights",
            reservation_id="RT0001",
            cabin="economy",
            flights=flights,
            payment_id="gift_card_9",
        )

    assert (
        check(_legs(("T300", "2030-01-10"), ("T400", "2030-01-10"), ("T200", "2030-01-12"))) == ()
    )
    assert check(_legs(("T300", "2030-01-10"), ("T200", "2030-01-12"))) == ("modify-route",)


def test_baggage_passengers_booking_and_compensation(gate: Gate) -> None:
    def bags(t: int, n: int) -> tuple[str, ...]:
        return _denied(
            gate,
            "update_reservation_baggages",
            reservation_id="RT0001",
            total_baggages=t,
            nonfree_baggages=n,
            payment_id="gift_card_9",
        )

    assert bags(4, 2) == ()
    assert bags(2, 1) == ("bags-removed",)
    assert bags(3, 0) == ("paid-bags-removed",)
    pax = [{"first_name": "X", "last_name": "Y", "dob": "2000-01-01"}]
    assert (
        _denied(gate, "update_reservation_passengers", reservation_id="OLD001", passengers=pax)
        == ()
    )
    assert _denied(
        gate, "update_reservation_passengers", reservation_id="OLD001", passengers=pax * 2
    ) == ("passenger-count",)

    def book(pay: list[str], passengers: int = 1) -> tuple[str, ...]:
        return _denied(
            gate,
            "book_reservation",
            user_id="ann_1",
            passengers=pax * passengers,
            payment_methods=[{"payment_id": p, "amount": 1} for p in pay],
        )

    assert book(["credit_card_1", "gift_card_1", "certificate_1"]) == ()
    assert book(["certificate_1", "certificate_2"]) == ("book-certificates",)
    assert book(["credit_card_1", "credit_card_2"]) == ("book-credit-cards",)
    assert book(["gift_card_1"] * 4) == ("book-gift-cards",)
    assert book(["gift_card_7"]) == ("book-payment-profile",)
    assert book(["credit_card_1"], passengers=6) == ("book-passengers",)

    def cert(uid: str) -> tuple[str, ...]:
        return _denied(gate, "send_certificate", user_id=uid, amount=100)

    assert cert("ann_1") == ("compensation-ineligible",)  # regular, uninsured, economy
    assert cert("bo_2") == ()  # gold
    assert cert("cy_3") == ()  # regular, but insured


def test_read_tools_and_unruled_tools_are_always_admitted(gate: Gate) -> None:
    assert gate.check("get_reservation_details", {"reservation_id": "OLD001"}, state()).admitted
    empty = Gate(parse_rules('{"now": "2030-01-05T12:00:00", "rules": []}').rules)
    assert empty.check("cancel_reservation", {"reservation_id": "OLD001"}, state()).admitted


def test_the_rungs_decide_as_table_20_describes(gate: Gate) -> None:
    verdict = gate.check("cancel_reservation", {"reservation_id": "OLD001"}, state())
    assert not verdict.admitted
    for rung in ("none", "shown"):
        assert gate.dispatch(rung, verdict).execute
    held = gate.dispatch("advisory", verdict)
    assert not held.execute and held.result is not None
    assert held.result.startswith(ADVISORY_NOTICE.split("{")[0])
    assert "repeat the same call" in held.result
    overridden = gate.dispatch("advisory", verdict, repeated=True)
    assert overridden.execute and overridden.overridden
    veto = gate.dispatch("enforce", verdict)
    assert not veto.execute
    assert veto.result == VETO.format(tool="cancel_reservation", reasons=verdict.reasons[0] + ".")
    assert not gate.dispatch("enforce", verdict, repeated=True).execute
    ok = gate.check("cancel_reservation", {"reservation_id": "NEW001"}, state())
    assert all(gate.dispatch(rung, ok).execute for rung in RUNGS)


def test_rules_shown_lists_every_rule(gate: Gate) -> None:
    text = rules_shown(gate.rules)
    assert text.startswith("<write_rules>") and text.endswith("</write_rules>")
    for rule in gate.rules.rules:
        assert rule.message in text
    assert text.count("\n- ") == len(gate.rules.rules)


@settings(max_examples=200, deadline=None)
@given(
    created=st.datetimes(min_value=datetime(2029, 12, 1), max_value=datetime(2030, 1, 6)),
    cabin=st.sampled_from(["basic_economy", "economy", "business"]),
    insurance=st.sampled_from(["yes", "no"]),
    statuses=st.lists(
        st.sampled_from(["available", "landed", "flying", "cancelled", "delayed"]),
        min_size=1,
        max_size=3,
    ),
)
def test_cancel_rules_agree_with_the_policy_read_directly(
    gate: Gate, created: datetime, cabin: str, insurance: str, statuses: list[str]
) -> None:
    flights = {
        f"F{i}": {"origin": "A", "destination": "B", "dates": {"2030-01-10": {"status": s}}}
        for i, s in enumerate(statuses)
    }
    reservation = {
        "user_id": "u",
        "cabin": cabin,
        "insurance": insurance,
        "created_at": created.isoformat(),
        "flights": [{"flight_number": f, "date": "2030-01-10"} for f in flights],
    }
    db = {"flights": flights, "users": {}, "reservations": {"R": reservation}}
    verdict = gate.check("cancel_reservation", {"reservation_id": "R"}, DictState(db))
    flown = any(s in ("landed", "flying") for s in statuses)
    eligible = (
        (datetime(2030, 1, 5, 12) - created).total_seconds() <= 24 * 3600
        or "cancelled" in statuses
        or cabin == "business"
        or insurance == "yes"
    )
    expected = (("cancel-flown",) if flown else ()) + (() if eligible else ("cancel-ineligible",))
    assert verdict.denied_by == expected
