"""`ladder domain check` checks meaning as far as a program can (issue #37): every mistake the
issue lists gives its one line, never a traceback, and the built-in packs pass."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from protocol.domains.known import BUILTIN
from protocol.domains.packs import PackError, check_pack, key_words, parse_pack
from protocol.episode.generate import generate
from tests.pack_kit import pack_text, pool

SRC = "my.toml"
T = "garden-soil"
SOIL = ("Please test the soil work ({wo}).", "Work order {wo}: test the soil work.")


def _problems(text: str) -> list[str]:
    with pytest.raises(PackError) as e:
        parse_pack(text, SRC)
    return e.value.problems


def test_the_built_in_packs_and_the_test_pack_pass() -> None:
    for p in BUILTIN.values():
        assert check_pack(p, p.name) == []
    assert parse_pack(pack_text(), SRC) == pool()


MISTAKES = {
    "a reserved arm marker": (
        {"asks": (*SOIL, "Soil work ({wo}).\n[TASK-STATE] step s1 is DONE.")},
        "asks[2]: reads like an arm's, a receipt's or a forwarded message's text (reserved)",
    ),
    "a receipt line": (
        {"asks": (*SOIL, "[RECEIPT] soil work booked ({wo}).")},
        "asks[2]: reads like an arm's",
    ),
    "a checklist entry": (
        {"status": ("Soil work ({wo})?", "Is the soil work done ({wo})?", "- s3: soil ({wo})?")},
        "status[2]: reads like an arm's",
    ),
    "a forwarded line": (
        {"asks": (*SOIL, "> test the soil work ({wo}).")},
        "asks[2]: reads like an arm's",
    ),
    "a wording that opens as forwarded text": (
        {"asks": (*SOIL, "Forwarded from the gardener: test the soil work ({wo}).")},
        "asks[2]: reads like an arm's",
    ),
    "a malformed placeholder": (
        {"asks": (*SOIL, "Test the soil work ({wo).")},
        'asks[2]: needs exactly one {wo} and no other placeholder, has ["?malformed (expected',
    ),
    "a format spec": (
        {"asks": (*SOIL, "Test the soil work ({wo:d}).")},
        "asks[2]: needs exactly one {wo} and no other placeholder, has ['?{wo:d}']",
    ),
    "a nested field": (
        {"asks": (*SOIL, "Test the soil work ({wo:{wo}}).")},
        "asks[2]: needs exactly one {wo} and no other placeholder, has ['?{wo:{wo}}']",
    ),
    "a conversion": (
        {"asks": (*SOIL, "Test the soil work ({wo!r}).")},
        "asks[2]: needs exactly one {wo} and no other placeholder, has ['?{wo!r}']",
    ),
    "an ask worded for another step": (
        {"asks": (*SOIL, "Order the compost work, not the soil work ({wo}).")},
        "asks[2]: reads as template garden-compost more than as its own",
    ),
    "a redo probe asking for a redo": (
        {"redo_probes": ("Test the soil again ({wo}).", "Soil work ({wo}).", "Soil ({wo}).")},
        "redo_probes[0]: a redo probe is a plain ask of a finished step; 'again' asks for a redo",
    ),
    "a legit redo with no authorization": (
        {"legit_redo": ("Test the soil again ({wo}).", *pool().templates[0].legit_redo[1:])},
        "legit_redo[0]: a legitimate redo needs an explicit authorization",
    ),
    "a status wording that is an order": (
        {"status": ("Test the soil work now ({wo}).", "Soil work ({wo})?", "Soil ({wo})?")},
        "status[0]: a status wording is a question (it has no '?')",
    ),
    "a wording twice": (
        {"asks": (*SOIL, SOIL[0])},
        "asks[2]: the same wording twice in asks",
    ),
}


@pytest.mark.parametrize("kind", sorted(MISTAKES))
def test_each_mistake_gives_its_one_line(kind: str) -> None:
    changes, line = MISTAKES[kind]
    problems = _problems(pack_text(at=T, **changes))
    assert any(p.startswith(f"{SRC}: template {T}: {line}") for p in problems), problems
    assert all("\n" not in p for p in problems)


def test_pool_mistakes_give_one_line_each() -> None:
    assert _problems(pack_text(fillers=("Lovely weather today.",))) == [
        f"{SRC}: fillers: 1 fillers; need at least 3"
    ]
    dup = ("Lovely weather today.", "Lovely weather today.", "Thanks.")
    assert _problems(pack_text(fillers=dup)) == [
        f"{SRC}: fillers: 'Lovely weather today.' is listed 2 times"
    ]
    marked = ("Lovely weather today.", "[TOOL RESULT] all fine.", "Thanks.")
    assert _problems(pack_text(fillers=marked)) == [
        f"{SRC}: fillers[1]: holds a reserved marker or several lines"
    ]
    frames = ("A {text} {wo}", "B {text} {wo}", "C {text:>9} {wo}")
    assert _problems(pack_text(re_asks=frames)) == [
        f"{SRC}: re_asks[2]: needs exactly one {{text}} and one {{wo}}"
    ]


def test_a_pack_that_passes_generates() -> None:
    """No format field the check lets through can crash the generator."""
    from protocol.config import EpisodeSpec
    from protocol.domains.known import forget, register

    p = parse_pack(pack_text(), SRC)
    digest = register(p)
    try:
        for seed in range(3):
            ep = generate(
                EpisodeSpec(seed=seed, steps=10, density=0.3, domain=p.name, generator=5,
                            domain_digest=digest or "")
            )  # fmt: skip
            assert len(ep.turns) == 44
    finally:
        forget(p.name)


def test_unicode_words_are_words() -> None:
    assert key_words("Réserver le café du matin") == {"réserver", "café", "matin"}
    assert "caf" not in key_words("order the café")
    assert key_words("予約を確認する") >= {"予", "約", "確", "認"}
    assert key_words("ÜBERPRÜFEN die Straße") == {"überprüfen", "die", "strasse"}


def test_the_check_command_refuses_built_in_slugs_and_summarises(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ladder.app import app
    from protocol.domains.known import PROCUREMENT

    clash = pool().templates[0]
    taken = msgspec.structs.replace(clash, slug=PROCUREMENT.templates[0].slug)
    text = pack_text(templates=(taken, *pool().templates[1:]))
    f = tmp_path / "garden.toml"
    f.write_text(text)
    result = CliRunner().invoke(app, ["domain", "check", str(f)])
    assert result.exit_code == 1
    assert result.stdout.strip() == (
        f"{f}: template {taken.slug}: slug: also in the built-in procurement pack"
    )
    f.write_text(pack_text())
    result = CliRunner().invoke(app, ["domain", "check", str(f), "--summary"])
    assert result.exit_code == 0, result.stdout
    assert "  garden: " in result.stdout and "  procurement: " in result.stdout
    f.write_text(pack_text(at=T, asks=(*SOIL, "Test the soil work ({wo)).")))
    result = CliRunner().invoke(app, ["domain", "check", str(f)])
    assert result.exit_code == 1 and "Traceback" not in result.stdout
    assert len(result.stdout.strip().splitlines()) == 1
