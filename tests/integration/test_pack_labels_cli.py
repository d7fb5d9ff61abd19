"""The pack-meaning rules (issue #46) through the command line and a run directory's copy of a
pack; the rules themselves: tests/protocol/domains/test_pack_labels.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol.domains.packs import PackError, parse_pack
from tests.protocol.domains.test_pack_labels import SRC, _with


def test_ladder_domain_check_prints_them_and_exits_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(_with("asks", "Do not test the soil work ({wo})."))
    result = CliRunner().invoke(app, ["domain", "check", str(bad)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "an order worded as a negation ('Do not')" in result.output


def test_a_run_directorys_copy_loads_without_the_meaning_rules(tmp_path: Path) -> None:
    """Old logs rescore: a pack a run used before these rules existed still loads from the
    run's copy (its digest, not its wording, is what rescoring checks)."""
    from protocol.domains.known import forget
    from runner.grid.packs import load_pack_file
    from runner.rundir.packs import PACKS_DIR, load_run_packs

    text = _with("asks", "Do not test the soil work ({wo}).")
    with pytest.raises(PackError):
        parse_pack(text, SRC)
    pool_ = parse_pack(text, SRC, meaning=False)
    run = tmp_path / "run"
    (run / PACKS_DIR).mkdir(parents=True)
    (run / PACKS_DIR / "garden.toml").write_text(text)
    try:
        load_run_packs(run)  # no PackError
        with pytest.raises(PackError):
            load_pack_file(run / PACKS_DIR / "garden.toml")  # a new run refuses it
    finally:
        forget("garden")
    assert pool_.name == "garden"
