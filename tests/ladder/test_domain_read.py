"""`ladder domain check --model M --base-url URL` (issue #46): a served model reads every
wording of a pack back, and each reading that differs from the pack's label is listed; the
embedded scripted endpoint's reader (serve/agents/pack_reader.py) stands in for a model."""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec
from typer.testing import CliRunner

from ladder.app import app
from ladder.domain_read import _read
from protocol.domains.readback import (
    SAMPLE_WORK_ORDER,
    Item,
    disagreement,
    parse_reading,
    read_items,
)
from protocol.domains.shape import DomainPool
from runner.grid.schema import EMBEDDED, ModelConfig
from tests.pack_kit import pack_text, pool

READER = ModelConfig(name="scripted/perfect")


def _soil(**changes: tuple[str, ...]) -> DomainPool:
    p = pool()
    t = msgspec.structs.replace(p.templates[0], **changes)
    return msgspec.structs.replace(p, templates=(t, *p.templates[1:]))


def test_the_reader_lists_each_wording_it_reads_otherwise() -> None:
    """Mistakes planted past the static check (the pool is built, not parsed): a negated
    ask, an ask worded as a question, a status question that is an order."""
    bad = _soil(
        asks=(
            "Please test the soil work for the garden ({wo}).",
            "Do not test the soil work along the driveway ({wo}).",
            "Has the soil work been tested yet ({wo})?",
        ),
        status=(
            "What's the status of the soil work ({wo})?",
            "Please test the soil work now ({wo})?",
            "Is the soil work finished yet ({wo})?",
        ),
    )
    n, found = asyncio.run(_read(EMBEDDED, None, READER, bad))
    assert n == len(read_items(bad)) == 18 * 15 + 3
    assert [(d.item.where, d.said) for d in found] == [
        ("template garden-soil: asks[1]",
         "read as garden-soil (not an order); the pack means garden-soil (an order)"),
        ("template garden-soil: asks[2]",
         "read as garden-soil (not an order); the pack means garden-soil (an order)"),
        ("template garden-soil: status[1]",
         "read as garden-soil (an order); the pack means garden-soil (not an order)"),
    ]  # fmt: skip
    assert (
        found[0].item.text == f"Do not test the soil work along the driveway ({SAMPLE_WORK_ORDER})."
    )


def test_a_clean_pack_reads_as_labelled_and_exits_0(tmp_path: Path) -> None:
    pack = tmp_path / "garden.toml"
    pack.write_text(pack_text())
    args = ["domain", "check", str(pack), "--model", "scripted/perfect", "--base-url", "embedded"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "scripted/perfect read 273 wordings; 0 disagree with the pack's labels" in result.output


def test_a_filler_that_names_a_step_is_listed_and_exits_1(tmp_path: Path) -> None:
    # one of the step's two own words: the static check lets it pass, the reader does not
    fillers = ("Lovely weather today.", "Back in ten minutes.", "The soil looked dry this morning.")
    pack = tmp_path / "garden.toml"
    pack.write_text(pack_text(fillers=fillers))
    args = ["domain", "check", str(pack), "--model", "scripted/perfect", "--base-url", "embedded"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert (
        f"{pack}: fillers[2]: read as garden-soil (an order); the pack means no step (not an "
        "order): 'The soil looked dry this morning.'"
    ) in result.output


def test_an_endpoint_that_does_not_answer_is_one_line(tmp_path: Path) -> None:
    pack = tmp_path / "garden.toml"
    pack.write_text(pack_text())
    args = ["domain", "check", str(pack), "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "the reader's endpoint did not answer" in result.output


def test_answers_are_read_bounded_and_unreadable_ones_listed() -> None:
    assert parse_reading('Sure: {"step": 3, "order": false}') is not None
    assert parse_reading("{" * 10_000 + '"step": 1') is None
    assert parse_reading('{"step": "x", "order": 1} then {"step": 2, "order": true}') == (
        parse_reading('{"step": 2, "order": true}')
    )
    item = Item(where="fillers[0]", text="Hi.", step=0, order=False)
    got = disagreement(pool(), item, "I cannot tell.")
    assert got is not None and got.said == "no answer it could read: 'I cannot tell.'"
    assert disagreement(pool(), item, '{"step": 0, "order": false}') is None
