"""protocol.arms.table: the one arm table, and everything that reads it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from protocol.arms.table import (
    ARMS,
    ArmSpec,
    arm_names,
    arm_rank,
    arm_spec,
    arm_table,
    ladder,
    memory_arms,
    side_contrasts,
)
from protocol.registry import RegistryError
from runner.arms import registry
from runner.grid.expand import GridError, parse_grid
from runner.grid.schema import RunConfig


def test_the_table_holds_the_papers_rungs_and_side_contrasts() -> None:
    assert ladder() == ("raw", "checklist", "directive", "enforce")
    assert side_contrasts() == (
        ("checklist", "ledger", "Section 5.2"),
        ("directive", "ledger", "Section 5.2"),
        ("enforce", "hybrid", "Appendix D.3"),
    )
    # The ledger's third contrast is against the replace-mode checklist, in Table 16's family.
    ledger = arm_spec("ledger")
    assert ledger is not None
    assert [(c.reference, c.reference_knobs, c.table) for c in ledger.contrasts][2] == (
        "checklist",
        (("checklist_mode", "replace"),),
        "Table 16",
    )
    assert {a.name for a in arm_table() if a.compiles} == {"directive", "enforce", "hybrid"}
    assert {a.name for a in arm_table() if a.matcher} == {"directive", "enforce", "hybrid"}
    assert len(set(arm_names())) == len(arm_names())


def test_the_registry_matches_the_table() -> None:
    assert registry.registered() == arm_names()
    assert memory_arms() == ("memory-topk", "mem0")
    assert {a.name for a in arm_table() if a.needs == "memory"} == set(memory_arms())
    assert {a.name: a.prompt for a in arm_table() if a.prompt != "text"} == {
        "ledger": "ledger",
        "directive": "gate",
        "enforce": "gate",
        "hybrid": "gate",
        "memory-topk": "memory",
        "mem0": "memory",
    }


def test_the_memory_arms_load_on_first_get() -> None:
    """The memory arms' modules (faiss, numpy, mem0) are not imported with runner.arms; the
    first get imports one and checks its class against the ArmSession base."""
    code = (
        "import sys, runner.arms as a; "
        "assert 'runner.arms.mem0' not in sys.modules and 'runner.arms.memory' not in sys.modules; "
        "cls = a.registry.get('memory-topk'); "
        "assert issubclass(cls, a.ArmSession) and 'runner.arms.memory' in sys.modules; "
        "assert 'runner.arms.mem0' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_registration_is_checked() -> None:
    with pytest.raises(ValueError, match="not in the arm table"):
        registry.register("nope", lazy="runner.arms.text:RawArm")
    with pytest.raises(ValueError, match="registered twice"):
        registry.register("raw", lazy="runner.arms.text:RawArm")
    with pytest.raises(ValueError, match="not 'module:Object'"):
        registry.register("raw", lazy="runner.arms.text.RawArm")
    with pytest.raises(ValueError, match="is not implemented"):
        registry.get("nope")


def test_a_lazy_binding_is_checked_against_the_base_on_first_get() -> None:
    for row in (ArmSpec(name="odd"), ArmSpec(name="odder")):
        ARMS.add(row.name, row)
    try:
        registry.register("odd", lazy="protocol.arms.table:ArmSpec")  # imports fine, is no session
        assert "odd" in registry.registered()
        with pytest.raises(RegistryError, match="is not a valid arm session"):
            registry.get("odd")
        with pytest.raises(RegistryError, match="is not a valid arm session"):
            registry.register("odder")(ArmSpec)  # type: ignore[type-var]
    finally:
        registry.SESSIONS.remove("odd")
        ARMS.remove("odd")
        ARMS.remove("odder")
    assert "odd" not in arm_names() and "odd" not in registry.registered()


def test_a_row_added_later_is_seen_by_every_reader() -> None:
    """No name list is frozen at import: a row added after every module loaded is read by
    the grid check, the scoring's arm list and the ladder's sort."""
    ARMS.add("toy", ArmSpec(name="toy", session="runner.arms.text:RawArm"))
    try:
        assert "toy" in arm_names() and arm_rank("toy") == (len(arm_names()) - 1, "")
        assert registry.get("toy").__name__ == "RawArm"  # bound from its row's session
        parse_grid({"run": {"arms": ["toy"]}, "models": [{"name": "m"}]})
    finally:
        registry.SESSIONS.remove("toy")
        ARMS.remove("toy")


def test_unknown_arms_sort_after_the_table() -> None:
    assert sorted(["tools", "enforce", "raw"], key=arm_rank) == ["raw", "enforce", "tools"]
    assert arm_spec("nope") is None


def test_the_grid_reads_arm_names_from_the_table() -> None:
    assert RunConfig().arms == list(ladder())
    with pytest.raises(GridError, match="did you mean 'enforce'"):
        parse_grid({"run": {"arms": ["enforse"]}, "models": [{"name": "m"}]})


@pytest.mark.parametrize(
    "module", ["runner.gates.helpers", "runner.arms", "runner.execution.scheduler"]
)
def test_each_runner_module_imports_alone(module: str) -> None:
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
