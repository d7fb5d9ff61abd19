"""`ladder domain check` refuses a wording that says the opposite of its label (issue #46;
protocol.domains.meaning): a pack holding each mistake gives one line per wording, the
wording quoted; the shipped packs pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.domains.known import BUILTIN
from protocol.domains.meaning import meaning_problems
from protocol.domains.packs import PackError, parse_pack
from tests.pack_kit import pack_text, pool

SRC = "my.toml"
T = "garden-soil"
ASK = ("Please test the soil work for the garden ({wo}).", "Work order {wo}: test the soil work.")
PROBE = ("Test the soil work, please ({wo}).", "Work order {wo}: please do the soil work.")
STATUS = ("What's the status of the soil work ({wo})?", "Work order {wo}: where is the soil work?")
REDO = (
    "A storm undid it, so I explicitly authorize a redo: test the soil work again ({wo}).",
    "Because the weather changed, I explicitly authorize you to redo the soil work ({wo}).",
)
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "domains"

# mistake -> (the template's changed field, the wording, what the line says)
MISTAKES = {
    "a negated ask": ("asks", "Do not test the soil work along the driveway ({wo}).",
                      "an order worded as a negation ('Do not')"),
    "a negated ask, contracted": ("asks", "Please don't test the soil work yet ({wo}).",
                                  "an order worded as a negation (\"don't\")"),
    "an ask worded as a status question": (
        "asks", "Has the soil work been tested yet ({wo})?",
        "an order worded as a status question"),
    "a redo probe saying a second time": (
        "redo_probes", "Test the soil work a second time, please ({wo}).",
        "a redo probe is a plain ask of a finished step; 'a second time' asks for a redo"),
    "a redo probe saying twice": (
        "redo_probes", "Work order {wo}: the soil work, twice.", "'twice' asks for a redo"),
    "a redo probe with a negated authorization": (
        "redo_probes", "This is not authorized: please test the soil work ({wo}).",
        "a redo probe carries no authorization word ('authorized'), negated or not"),
    "a legitimate redo with its authorization negated": (
        "legit_redo", "The soil work is not authorized for a redo; test the soil work ({wo}).",
        "a legitimate redo's authorization is negated ('not authorized')"),
    "a status wording that is an order": (
        "status", "Please test the soil work now ({wo})?",
        "a status wording is a question about the step; 'Please' makes it an order"),
    "a status wording that is a polite order": (
        "status", "Work order {wo}: could you test the soil work?", "'could you' makes it an order"),
    "a receipt code spelled out": (
        "asks", "Test the soil work, receipt code R C four two one nine ({wo}).",
        "spells out a receipt code or work order ('R C four')"),
    "a work order without its hash": (
        "asks", "Please test the soil work under W4821 ({wo}).",
        "spells out a receipt code or work order ('W4821')"),
}  # fmt: skip


def _with(field: str, wording: str) -> str:
    base = {"asks": ASK, "redo_probes": PROBE, "status": STATUS, "legit_redo": REDO}[field]
    return pack_text(at=T, **{field: (*base, wording)})


def _problems(text: str) -> list[str]:
    with pytest.raises(PackError) as e:
        parse_pack(text, SRC)
    return e.value.problems


def test_the_shipped_packs_and_the_test_pack_pass() -> None:
    for p in BUILTIN.values():
        assert meaning_problems(p, p.name) == []
    assert meaning_problems(pool(), SRC) == []
    for f in EXAMPLES.glob("*.toml"):
        if f.name != "grid.toml":
            assert meaning_problems(parse_pack(f.read_text(), f.name), f.name) == []


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_each_mistake_is_one_line_with_the_wording_quoted(name: str) -> None:
    field, wording, says = MISTAKES[name]
    got = [p for p in _problems(_with(field, wording)) if f"{field}[2]" in p]
    assert len(got) == 1, got
    assert got[0].startswith(f"{SRC}: template {T}: {field}[2]: ") and says in got[0]
    assert got[0].endswith(repr(wording)), got[0]


def test_what_is_not_a_mistake_passes() -> None:
    fine = {
        "asks": "Could you test the soil work for the garden ({wo})?",  # a polite order
        "redo_probes": "Don't wait on it: test the soil work, please ({wo}).",  # hurries it
        "legit_redo": "The samples never arrived, so I explicitly authorize a redo of the soil "
        "work ({wo}).",  # the reason may negate; the authorization does not
    }
    for field, wording in fine.items():
        assert meaning_problems(parse_pack(_with(field, wording), SRC), SRC) == []


def test_a_done_claim_in_a_filler_is_refused() -> None:
    fillers = ("Lovely weather today.", "Back in ten minutes.", "The soil work is already done.")
    got = _problems(pack_text(fillers=fillers))
    assert got == [
        f"{SRC}: fillers[2]: a filler is small talk; 'is already done' claims work is done: "
        "'The soil work is already done.'"
    ]
