"""protocol.arms.table: the one arm table (an open one), and everything that reads it."""

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
    enforced,
    enforcing_arms,
    gate_arms,
    ladder,
    memory_arms,
    side_contrasts,
)
from protocol.registry import RegistryError
from runner.arms import registry
from runner.grid.expand import GridError, parse_grid
from runner.grid.schema import RunConfig


def test_the_paper_arms_keep_their_rungs_and_side_contrasts() -> None:
    """The paper's rows (the table is open: other rows may follow them)."""
    assert ladder() == ("raw", "checklist", "directive", "enforce")
    assert side_contrasts()[:3] == (
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
    assert len(set(arm_names())) == len(arm_names())


PAPER_TRAITS = {  # name: (compiles, matcher, enforcing, validated, memory, prompt)
    "raw": (False, False, False, False, False, "text"),
    "checklist": (False, False, False, False, False, "text"),
    "ledger": (False, False, False, False, False, "ledger"),
    "directive": (True, True, False, False, False, "gate"),
    "enforce": (True, True, True, False, False, "gate"),
    "hybrid": (True, True, True, True, False, "gate"),
    "memory-topk": (False, False, False, False, True, "memory"),
    "mem0": (False, False, False, False, True, "memory"),
}


@pytest.mark.parametrize("name", sorted(PAPER_TRAITS))
def test_each_paper_arm_carries_its_traits(name: str) -> None:
    a = arm_spec(name)
    assert a is not None
    assert (a.compiles, a.matcher, a.enforcing, a.validated, a.memory, a.prompt) == (
        PAPER_TRAITS[name]
    )


def test_the_trait_readers_follow_the_traits() -> None:
    for name in PAPER_TRAITS:
        a = arm_spec(name)
        assert a is not None
        assert (name in gate_arms()) == a.matcher
        assert (name in enforcing_arms()) == a.enforcing
        assert (name in memory_arms()) == a.memory
        # enforced: always for an arm that enforces unconditionally, else as recorded
        assert enforced(name, recorded=True)
        assert enforced(name, recorded=False) == (a.enforcing and not a.validated)
    assert not enforced("nope", recorded=False)


def test_every_row_names_a_session_that_imports() -> None:
    """Each row binds its own session: no second list of names to keep in step."""
    assert registry.registered() == arm_names()
    assert registry.check(arm_names()) == []
    assert {a.name for a in arm_table() if a.needs == "memory"} == set(memory_arms())
    assert registry.get("ledger").__module__ == "runner.arms.ledger"
    assert (
        registry.get("enforce").__name__ == "DirectiveGate"
    )  # one session, its traits from the row


def test_the_memory_arms_load_on_first_get() -> None:
    """No arm's module is imported with runner.arms; the first get imports one and checks its
    class against the ArmSession base."""
    code = (
        "import sys, runner.arms as a; "
        "assert not [m for m in sys.modules if m.startswith('runner.arms.')"
        " and m not in ('runner.arms.base', 'runner.arms.registry')]; "
        "cls = a.registry.get('memory-topk'); "
        "assert issubclass(cls, a.ArmSession) and 'runner.arms.memory' in sys.modules; "
        "assert 'runner.arms.mem0' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_session_is_checked_in_one_line() -> None:
    rows = (
        ArmSpec(name="odd", session="protocol.arms.table:ArmSpec"),  # imports, is no session
        ArmSpec(name="gone", session="no_such_module_here:Arm"),
        ArmSpec(name="bare"),  # no session at all
        ArmSpec(name="bad", session=ArmSpec),
    )
    for row in rows:
        ARMS.add(row.name, row)
    try:
        with pytest.raises(RegistryError, match="is not a valid arm session"):
            registry.get("odd")
        problems = registry.check(["odd", "gone", "bare", "bad", "raw"])
        assert len(problems) == 4 and all("\n" not in p for p in problems)
        assert "cannot import no_such_module_here" in problems[1]
        assert "arm 'bare' is not implemented" in problems[2]
        assert "is not a valid arm session" in problems[3]
        with pytest.raises(RegistryError, match="is not in the arm table"):
            registry.get("nope")
    finally:
        for row in rows:
            ARMS.remove(row.name)
    assert "odd" not in arm_names() and "odd" not in registry.registered()


def test_a_row_added_later_is_seen_by_every_reader() -> None:
    """No name list is frozen at import: a row added after every module loaded is read by
    the grid check, the scoring's arm list and the ladder's sort; its session may be the
    class itself."""
    from runner.arms.text import RawArm

    ARMS.add("toy", ArmSpec(name="toy", session=RawArm))
    try:
        assert "toy" in arm_names() and arm_rank("toy") == (len(arm_names()) - 1, "")
        assert registry.get("toy") is RawArm  # bound from its row's session
        parse_grid({"run": {"arms": ["toy"]}, "models": [{"name": "m"}]})
    finally:
        ARMS.remove("toy")
    with pytest.raises(RegistryError, match="is not in the arm table"):
        registry.get("toy")  # the row went: so did its binding


def test_unknown_arms_sort_after_the_table() -> None:
    assert sorted(["tools", "enforce", "raw"], key=arm_rank) == ["raw", "enforce", "tools"]
    assert arm_spec("nope") is None


def test_the_grid_reads_arm_names_from_the_table() -> None:
    assert RunConfig().arms == list(ladder())
    with pytest.raises(GridError, match="did you mean 'enforce'"):
        parse_grid({"run": {"arms": ["enforse"]}, "models": [{"name": "m"}]})


@pytest.mark.parametrize(
    "module", ["runner.gates.helper_models", "runner.arms", "runner.execution.scheduler"]
)
def test_each_runner_module_imports_alone(module: str) -> None:
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
