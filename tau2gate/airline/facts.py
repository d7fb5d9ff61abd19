"""The fact vocabulary the airline deny rules are written over (pure, no I/O).

A rule never reads the database directly: it compares *facts*, named typed values computed
here from the database state and the call's arguments at dispatch time. Each fact belongs to
the write tools it is defined for; the validator (:mod:`tau2gate.parse`) refuses a rule that
names a fact outside its tool's vocabulary or compares it with a value of the wrong type.

The database is read through :class:`tau2gate.domain.Tables` (tables ``reservations``,
``users``, ``flights``, rows shaped like τ²-bench's airline records). A fact the state cannot decide (an unknown reservation, a
missing timestamp, a flight number not in the database) is ``None``; every comparison with
``None`` is false (:mod:`tau2gate.rules`).

A segment counts as *flown* when its flight's status on its date is ``landed`` or
``flying``, and as *cancelled by the airline* when that status is ``cancelled`` (the
database's own statuses; docs/tau2.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from tau2gate.domain import FactSpec, FactTable, Tables, Value, fact, row_of

__all__ = [
    "FACTS",
    "WRITE_TOOLS",
    "compute_facts",
    "facts_for",
]

WRITE_TOOLS: tuple[str, ...] = (
    "book_reservation",
    "cancel_reservation",
    "send_certificate",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
)
"""The six WRITE tools of τ²-bench's airline domain (the gate's scope; Appendix H)."""

_RESERVATION_TOOLS = (
    "cancel_reservation",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
)
_USER_TOOLS = ("book_reservation", "send_certificate")

_get = row_of


class _Ctx:
    """What one call's facts are computed from (looked up once per call)."""

    def __init__(
        self, tool: str, args: Mapping[str, Any], state: Tables, now: datetime | None
    ) -> None:
        self.tool = tool
        self.args = args
        self.state = state
        self.now = now
        rid = args.get("reservation_id")
        self.reservation = state.row("reservations", rid) if isinstance(rid, str) else None
        uid = args.get("user_id")
        if not isinstance(uid, str) and self.reservation is not None:
            uid = self.reservation.get("user_id")
        self.user = state.row("users", uid) if isinstance(uid, str) else None

    def segment_statuses(self) -> list[str | None]:
        if self.reservation is None:
            return []
        return [_flight_status(self.state, seg) for seg in _seq(self.reservation.get("flights"))]


def _seq(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list | tuple) else ()


def _flight_status(state: Tables, segment: Any) -> str | None:
    if not isinstance(segment, Mapping):
        return None
    number, date = segment.get("flight_number"), segment.get("date")
    flight = state.row("flights", number) if isinstance(number, str) else None
    if flight is None or not isinstance(date, str):
        return None
    day = _get(flight.get("dates"), date)
    status = None if day is None else day.get("status")
    return status if isinstance(status, str) else None


def _any_status(ctx: _Ctx, statuses: set[str]) -> Value:
    if ctx.reservation is None:
        return None
    return any(s in statuses for s in ctx.segment_statuses())


def _res_field(name: str) -> Callable[[_Ctx], Value]:
    def get(ctx: _Ctx) -> Value:
        if ctx.reservation is None:
            return None
        value = ctx.reservation.get(name)
        return value if isinstance(value, bool | int | float | str) else None

    return get


def _res_status(ctx: _Ctx) -> Value:
    if ctx.reservation is None:
        return None
    return "cancelled" if ctx.reservation.get("status") == "cancelled" else "active"


def _res_passengers(ctx: _Ctx) -> Value:
    return None if ctx.reservation is None else len(_seq(ctx.reservation.get("passengers")))


def _parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _hours_since_booking(ctx: _Ctx) -> Value:
    created = None if ctx.reservation is None else _parse_time(ctx.reservation.get("created_at"))
    if created is None or ctx.now is None:
        return None
    return (ctx.now - created).total_seconds() / 3600.0


def _membership(ctx: _Ctx) -> Value:
    value = None if ctx.user is None else ctx.user.get("membership")
    return value if isinstance(value, str) else None


def _user_reservations(ctx: _Ctx) -> list[Mapping[str, Any]] | None:
    if ctx.user is None:
        return None
    found = (ctx.state.row("reservations", r) for r in _seq(ctx.user.get("reservations")))
    return [r for r in found if r is not None]


def _user_any(pred: Callable[[Mapping[str, Any]], bool]) -> Callable[[_Ctx], Value]:
    def get(ctx: _Ctx) -> Value:
        rows = _user_reservations(ctx)
        return None if rows is None else any(pred(r) for r in rows)

    return get


def _arg(name: str, kind: type | tuple[type, ...]) -> Callable[[_Ctx], Value]:
    def get(ctx: _Ctx) -> Value:
        value = ctx.args.get(name)
        if isinstance(value, bool) and kind is not bool:
            return None
        ok = isinstance(value, kind) and isinstance(value, bool | int | float | str)
        return cast(Value, value) if ok else None

    return get


def _arg_len(name: str) -> Callable[[_Ctx], Value]:
    def get(ctx: _Ctx) -> Value:
        value = ctx.args.get(name)
        return len(value) if isinstance(value, list | tuple) else None

    return get


def _payment_source(ctx: _Ctx, payment_id: Any) -> str | None:
    if ctx.user is None or not isinstance(payment_id, str):
        return None
    method = _get(ctx.user.get("payment_methods"), payment_id)
    source = None if method is None else method.get("source")
    return source if isinstance(source, str) else None


def _book_payment_ids(ctx: _Ctx) -> list[Any]:
    return [
        p.get("payment_id") if isinstance(p, Mapping) else None
        for p in _seq(ctx.args.get("payment_methods"))
    ]


def _book_count(source: str) -> Callable[[_Ctx], Value]:
    def get(ctx: _Ctx) -> Value:
        if ctx.user is None:
            return None
        ids = _book_payment_ids(ctx)
        return sum(1 for pid in ids if _payment_source(ctx, pid) == source)

    return get


def _payments_in_profile(ctx: _Ctx) -> Value:
    if ctx.user is None:
        return None
    return all(_payment_source(ctx, pid) is not None for pid in _book_payment_ids(ctx))


def _arg_payment_source(ctx: _Ctx) -> Value:
    return _payment_source(ctx, ctx.args.get("payment_id"))


def _arg_flight_keys(ctx: _Ctx) -> list[tuple[Any, Any]] | None:
    flights = ctx.args.get("flights")
    if not isinstance(flights, list | tuple):
        return None
    return [
        (f.get("flight_number"), f.get("date")) if isinstance(f, Mapping) else (None, None)
        for f in flights
    ]


def _flights_changed(ctx: _Ctx) -> Value:
    keys = _arg_flight_keys(ctx)
    if keys is None or ctx.reservation is None:
        return None
    held = {
        (s.get("flight_number"), s.get("date"))
        for s in _seq(ctx.reservation.get("flights"))
        if isinstance(s, Mapping)
    }
    return set(keys) != held


def _cabin_changed(ctx: _Ctx) -> Value:
    cabin = ctx.args.get("cabin")
    if ctx.reservation is None or not isinstance(cabin, str):
        return None
    return cabin != ctx.reservation.get("cabin")


def _route_changed(ctx: _Ctx) -> Value:
    """True when the new itinerary leaves the reservation's origin, destination or trip type.

    One way: the first leg leaves the origin and the last arrives at the destination. Round
    trip: the first leg leaves the origin, the last returns to it, and some leg arrives at
    the destination. ``None`` when a flight number is not in the database.
    """
    keys = _arg_flight_keys(ctx)
    if keys is None or ctx.reservation is None or not keys:
        return None
    legs = [ctx.state.row("flights", n) if isinstance(n, str) else None for n, _ in keys]
    if any(leg is None for leg in legs):
        return None
    ends = [(leg.get("origin"), leg.get("destination")) for leg in legs if leg is not None]
    origin, destination = ctx.reservation.get("origin"), ctx.reservation.get("destination")
    if ctx.reservation.get("flight_type") == "round_trip":
        kept = (
            ends[0][0] == origin
            and ends[-1][1] == origin
            and any(arrive == destination for _, arrive in ends)
        )
    else:
        kept = ends[0][0] == origin and ends[-1][1] == destination
    return not kept


_R, _U = _RESERVATION_TOOLS, _USER_TOOLS
_INT = int
_NUM = (int, float)

_TABLE: tuple[tuple[FactSpec, Callable[[_Ctx], Value]], ...] = (
    (fact("reservation.cabin", "str", _R, "the reservation's cabin class"), _res_field("cabin")),
    (
        fact("reservation.insurance", "str", _R, "'yes' or 'no': travel insurance bought"),
        _res_field("insurance"),
    ),
    (
        fact("reservation.flight_type", "str", _R, "'one_way' or 'round_trip'"),
        _res_field("flight_type"),
    ),
    (fact("reservation.status", "str", _R, "'active' or 'cancelled'"), _res_status),
    (
        fact("reservation.passenger_count", "int", _R, "passengers on the reservation"),
        _res_passengers,
    ),
    (
        fact("reservation.total_baggages", "int", _R, "checked bags on the reservation"),
        _res_field("total_baggages"),
    ),
    (
        fact("reservation.nonfree_baggages", "int", _R, "paid checked bags on it"),
        _res_field("nonfree_baggages"),
    ),
    (
        fact(
            "reservation.hours_since_booking",
            "float",
            _R,
            "hours from created_at to the rule set's `now`",
        ),
        _hours_since_booking,
    ),
    (
        fact("reservation.any_segment_flown", "bool", _R, "a segment is landed or flying"),
        lambda ctx: _any_status(ctx, {"landed", "flying"}),
    ),
    (
        fact(
            "reservation.any_segment_cancelled",
            "bool",
            _R,
            "a segment was cancelled by the airline",
        ),
        lambda ctx: _any_status(ctx, {"cancelled"}),
    ),
    (
        fact("reservation.any_segment_delayed", "bool", _R, "a segment is delayed"),
        lambda ctx: _any_status(ctx, {"delayed"}),
    ),
    (
        fact(
            "user.membership",
            "str",
            (*_R, *_U),
            "'regular', 'silver' or 'gold' (the call's user, else the reservation's)",
        ),
        _membership,
    ),
    (
        fact(
            "user.any_insured_reservation",
            "bool",
            ("send_certificate",),
            "one of the user's reservations has insurance",
        ),
        _user_any(lambda r: r.get("insurance") == "yes"),
    ),
    (
        fact(
            "user.any_business_reservation",
            "bool",
            ("send_certificate",),
            "one of the user's reservations is in business",
        ),
        _user_any(lambda r: r.get("cabin") == "business"),
    ),
    (
        fact(
            "args.cabin",
            "str",
            ("book_reservation", "update_reservation_flights"),
            "the cabin the call asks for",
        ),
        _arg("cabin", str),
    ),
    (
        fact("args.insurance", "str", ("book_reservation",), "the insurance the call asks for"),
        _arg("insurance", str),
    ),
    (
        fact("args.flight_type", "str", ("book_reservation",), "the trip type of the booking"),
        _arg("flight_type", str),
    ),
    (
        fact(
            "args.passenger_count",
            "int",
            ("book_reservation", "update_reservation_passengers"),
            "passengers in the call",
        ),
        _arg_len("passengers"),
    ),
    (
        fact(
            "args.total_baggages",
            "int",
            ("book_reservation", "update_reservation_baggages"),
            "checked bags in the call",
        ),
        _arg("total_baggages", _INT),
    ),
    (
        fact(
            "args.nonfree_baggages",
            "int",
            ("book_reservation", "update_reservation_baggages"),
            "paid checked bags in the call",
        ),
        _arg("nonfree_baggages", _INT),
    ),
    (
        fact(
            "args.certificate_count",
            "int",
            ("book_reservation",),
            "travel certificates among the payments",
        ),
        _book_count("certificate"),
    ),
    (
        fact("args.credit_card_count", "int", ("book_reservation",), "credit cards used"),
        _book_count("credit_card"),
    ),
    (
        fact("args.gift_card_count", "int", ("book_reservation",), "gift cards used"),
        _book_count("gift_card"),
    ),
    (
        fact(
            "args.payments_in_profile",
            "bool",
            ("book_reservation",),
            "every payment id is in the user's profile",
        ),
        _payments_in_profile,
    ),
    (
        fact(
            "args.payment_source",
            "str",
            ("update_reservation_baggages", "update_reservation_flights"),
            "source of payment_id in the profile: credit_card, gift_card or certificate",
        ),
        _arg_payment_source,
    ),
    (
        fact(
            "args.flights_changed",
            "bool",
            ("update_reservation_flights",),
            "the (flight number, date) set differs from the reservation's",
        ),
        _flights_changed,
    ),
    (
        fact(
            "args.cabin_changed",
            "bool",
            ("update_reservation_flights",),
            "the call's cabin differs from the reservation's",
        ),
        _cabin_changed,
    ),
    (
        fact(
            "args.route_changed",
            "bool",
            ("update_reservation_flights",),
            "the new flights change origin, destination or trip type",
        ),
        _route_changed,
    ),
    (
        fact("args.amount", "float", ("send_certificate",), "the certificate's amount"),
        _arg("amount", _NUM),
    ),
)

_FACTS: FactTable[_Ctx] = FactTable(_TABLE)
FACTS = _FACTS.facts
"""Every fact by name."""
facts_for = _FACTS.facts_for


def compute_facts(
    tool: str,
    args: Mapping[str, Any],
    state: Tables,
    now: datetime | None,
    names: Sequence[str] | None = None,
) -> dict[str, Value]:
    """The facts of one call (``names`` only, or all of the tool's), ``None`` where undecidable."""
    ctx = _Ctx(tool, args, state, now)
    return _FACTS.compute(tool, ctx, names)
