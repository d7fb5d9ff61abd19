"""protocol.arms: the one arm table, and everything that reads it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from protocol.arms import (
    ARM_NAMES,
    ARM_TABLE,
    LADDER,
    MEMORY_ARMS,
    SIDE_CONTRASTS,
    arm_rank,
    arm_spec,
)
from runner.arms import ARMS
from runner.grid import GridError, parse_grid
from runner.grid_schema import RunConfig


def test_the_table_holds_the_papers_rungs_and_side_contrasts() -> None:
    assert LADDER == ("raw", "checklist", "directive", "enforce")
    assert SIDE_CONTRASTS == (
        ("checklist", "ledger"),
        ("directive", "ledger"),
        ("enforce", "hybrid"),
    )
    # The ledger's third contrast is against the replace-mode checklist, in Table 16's family.
    ledger = arm_spec("ledger")
    assert ledger is not None
    assert [(c.reference, c.reference_knobs, c.table) for c in ledger.contrasts][2] == (
        "checklist",
        (("checklist_mode", "replace"),),
        "Table 16",
    )
    assert {a.name for a in ARM_TABLE if a.compiles} == {"directive", "enforce", "hybrid"}
    assert {a.name for a in ARM_TABLE if a.matcher} == {"directive", "enforce", "hybrid"}
    assert len(set(ARM_NAMES)) == len(ARM_NAMES)


def test_the_registry_matches_the_table() -> None:
    from runner.arms.memory import MEMORY_ARM_CLASSES  # registered on first use

    registry = {**ARMS, **MEMORY_ARM_CLASSES}
    assert tuple(registry) == ARM_NAMES
    assert all(registry[a.name].name == a.name for a in ARM_TABLE)
    assert MEMORY_ARMS == ("memory-topk", "mem0") == tuple(a.name for a in ARM_TABLE if a.memory)


def test_unknown_arms_sort_after_the_table() -> None:
    assert sorted(["tools", "enforce", "raw"], key=arm_rank) == ["raw", "enforce", "tools"]
    assert arm_spec("nope") is None


def test_the_grid_reads_arm_names_from_the_table() -> None:
    assert RunConfig().arms == list(LADDER)
    with pytest.raises(GridError, match="did you mean 'enforce'"):
        parse_grid({"run": {"arms": ["enforse"]}, "models": [{"name": "m"}]})


@pytest.mark.parametrize("module", ["runner.helpers", "runner.arms", "runner.scheduler"])
def test_each_runner_module_imports_alone(module: str) -> None:
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
