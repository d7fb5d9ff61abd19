"""Every kind of pack defect gives its one line naming the file, the template and the field
(issue #30, "Checked on load"); the pack written in the tests (tests/pack_kit.py) is clean."""

from __future__ import annotations

import pytest

from protocol.domains.packs import PackError, parse_pack
from tests.pack_kit import pack_text, pool

SRC = "my.toml"
T = "garden-soil"  # the first template (phase 0)


def _problems(text: str) -> list[str]:
    with pytest.raises(PackError) as e:
        parse_pack(text, SRC)
    return e.value.problems


def test_the_test_pack_is_clean() -> None:
    assert parse_pack(pack_text(), SRC) == pool()


TEMPLATE_DEFECTS: dict[str, tuple[dict[str, object], str]] = {
    "two paraphrases": (
        {"asks": ("Please test the soil work ({wo}).", "Soil work {wo}.")},
        "my.toml: template garden-soil: asks: 2 wordings, need exactly 3",
    ),
    "no work order": (
        {"status": ("Is the soil work done?", "Soil work {wo}?", "Soil work status ({wo})?")},
        "my.toml: template garden-soil: status[0]: needs exactly one {wo} and no other "
        "placeholder, has []",
    ),
    "two work orders": (
        {"status": ("Soil work {wo} and {wo}?", "Soil work {wo}?", "Soil status ({wo})?")},
        "my.toml: template garden-soil: status[0]: needs exactly one {wo} and no other "
        "placeholder, has ['wo', 'wo']",
    ),
    "key noun lost": (
        {"redo_probes": ("Please do it ({wo}).", "Soil work {wo}.", "Soil, please ({wo}).")},
        "my.toml: template garden-soil: redo_probes[0]: names none of the step's key words "
        "(soil, test)",
    ),
    "receipt-like code": (
        {"asks": ("Soil work RC-1234 ({wo}).", "Soil work {wo}.", "Soil, please ({wo}).")},
        "my.toml: template garden-soil: asks[0]: holds a receipt-like code (RC-dddd or #Wdddd)",
    ),
    "wording shared between steps": (
        # garden-compost's own status[2]: reported where it comes second
        {"status": ("Is the compost work finished yet ({wo})?", "Soil {wo}?", "Soil ({wo})?")},
        "my.toml: template garden-compost: status[2]: the same wording as template garden-soil",
    ),
    "bad slug": (
        {"slug": "Garden Soil"},
        "my.toml: template Garden Soil: slug: not lowercase words joined by hyphens",
    ),
}


@pytest.mark.parametrize("kind", sorted(TEMPLATE_DEFECTS))
def test_a_template_defect_gives_its_one_line(kind: str) -> None:
    changes, line = TEMPLATE_DEFECTS[kind]
    assert _problems(pack_text(at=T, **changes)) == [line]


def test_a_duplicate_slug_gives_its_one_line() -> None:
    assert _problems(pack_text(at="garden-compost", slug="garden-soil")) == [
        "my.toml: template garden-soil: slug: used by 2 templates"
    ]


def test_a_missing_template_gives_its_one_line() -> None:
    p = pool()
    text = pack_text(templates=p.templates[:-1])
    assert _problems(text) == [
        "my.toml: templates: 17 templates by phase {0: 3, 1: 3, 2: 3, 3: 3, 4: 3, 5: 2}; "
        "need 18, 3 in each phase 0..5"
    ]


def test_a_shifted_phase_gives_its_one_line() -> None:
    assert _problems(pack_text(at=T, phase=1)) == [
        "my.toml: templates: 18 templates by phase {0: 2, 1: 4, 2: 3, 3: 3, 4: 3, 5: 3}; "
        "need 18, 3 in each phase 0..5"
    ]


POOL_DEFECTS: dict[str, tuple[dict[str, object], str]] = {
    "filler with a work order": (
        {"fillers": ("Lovely weather today.", "Ticket #W1234 is fine.", "Thanks, noted.")},
        "my.toml: fillers[1]: carries a placeholder or a work order",
    ),
    "filler naming a step": (
        {"fillers": ("Lovely weather today.", "The tomato plants look great.", "Thanks.")},
        "my.toml: fillers[1]: names step garden-tomato (two of its key words, or its only one)",
    ),
    "re-ask without its text": (
        {"re_asks": ("Following up ({wo}).", "Circling back: {text} ({wo}).", "Again {text} {wo}")},
        "my.toml: re_asks[0]: needs exactly one {text} and one {wo}",
    ),
    "ambiguous probe with one step": (
        {"ambiguous": ("Do {a} ({wo}).", "Do {a} or {b} ({wo}).", "{a} or {b}? {wo}")},
        "my.toml: ambiguous[0]: needs exactly one {a}, one {b} and one {wo}",
    ),
    "four re-asks": (
        {"re_asks": ("A {text} {wo}", "B {text} {wo}", "C {text} {wo}", "D {text} {wo}")},
        "my.toml: re_asks: 4 frames, need exactly 3",
    ),
    "bad name": (
        {"name": "My Garden"},
        "my.toml: name: 'My Garden' is not a lowercase hyphenated name",
    ),
}


@pytest.mark.parametrize("kind", sorted(POOL_DEFECTS))
def test_a_pool_defect_gives_its_one_line(kind: str) -> None:
    changes, line = POOL_DEFECTS[kind]
    assert _problems(pack_text(at=None, **changes)) == [line]  # at=None: the pool itself


def test_several_defects_give_one_line_each() -> None:
    text = pack_text(at=T, phase=1, asks=("x {wo}", "Soil {wo}", "Soil ({wo})"))
    problems = _problems(text)
    assert len(problems) == 2 and all(p.startswith("my.toml: ") for p in problems)


def test_syntax_type_and_unknown_field_errors_give_one_line() -> None:
    assert _problems("name = ")[0].startswith("my.toml: not TOML: ")
    text = pack_text().replace("phase = 0\n", 'phase = "zero"\n', 1)
    assert _problems(text) == [
        "my.toml: template garden-soil: Expected `int`, got `str` - at `$.templates[0].phase`"
    ]
    text = pack_text().replace("phase = 0\n", 'phase = 0\nnoun = "soil"\n', 1)
    [line] = _problems(text)
    assert line.startswith("my.toml: template garden-soil: ") and "noun" in line
