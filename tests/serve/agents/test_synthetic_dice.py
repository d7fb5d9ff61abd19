"""The synthetic agent's multiplier: what the prompt shows about a step lowers a trap rate
only when it shows that status (a ledger has no word for "blocked")."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

from serve.agents.reading import View
from serve.agents.synthetic import DEFAULTS, _Dice


def _dice(ledger: dict[str, str]) -> _Dice:
    view = cast(View, SimpleNamespace(checklist=None, ledger_shown=ledger))
    return _Dice(view, dict(DEFAULTS), "k", thinking=False)


def test_nothing_shown_leaves_the_rate_alone_for_every_status() -> None:
    for status in ("done", "cancelled", "blocked", "lapsed"):
        assert _dice({}).multiplier("s1", status) == 1.0


def test_a_ledger_lowers_only_the_status_it_shows() -> None:
    dice = _dice({"s1": "DONE"})
    assert dice.multiplier("s1", "done") == DEFAULTS["ledger"]
    assert dice.multiplier("s1", "cancelled") == 1.0
    assert dice.multiplier("s1", "blocked") == 1.0
    assert dice.multiplier("s2", "done") == 1.0
