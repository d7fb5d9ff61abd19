"""The "holds a different grid" refusal (#40, item 5): what a user changed (models, arms,
seeds, graphs, domains, briefs, knobs) comes first, anything else after, nothing is cut, and
a field added to the grid since the manifest was written (at its default) is no change."""

from __future__ import annotations

from pathlib import Path

import msgspec

from runner.grid.change import compare_grids
from runner.rundir.manifest import _refusal
from tests.reliability_kit import grid_data, make_grid


def test_user_changes_come_first_and_nothing_is_cut() -> None:
    old = make_grid(seeds="100-101", steps=5, arms=("raw", "checklist"))
    old_data = msgspec.to_builtins(old)
    for e in old_data["endpoints"]:  # a manifest written before these endpoint fields
        e.pop("replica_slots", None)
        e.pop("routing", None)
    new_data = grid_data(
        seeds="100-101",
        steps=7,
        arms=("raw", "directive"),
        models=[{"name": "scripted/synthetic?seed=9", "endpoint": "embedded"}],
    )
    new_data["decoding"]["temperature"] = 0.5
    for i in range(8):  # more differences than the old refusal showed (it cut at six)
        new_data["endpoints"].append({"name": f"spare{i}", "base_url": "embedded"})
    new = msgspec.convert(new_data, type(old))
    change = compare_grids(old_data, new)
    assert not change.compatible
    keys = [line.split(" ", 1)[0] for line in change.diff]
    assert not any(k.startswith("endpoints[embedded]") for k in keys), keys  # no noise
    first_other = next(i for i, k in enumerate(keys) if k.startswith(("decoding", "endpoints")))
    user = keys[:first_other]
    assert any(k.startswith("models") for k in user)
    assert "run.arms" in user and "run.graphs" in user  # steps x density as graphs (#49)
    assert user.index("run.arms") < user.index("run.graphs")
    assert all(not k.startswith(("models", "run.")) for k in keys[first_other:])
    message = str(_refusal(Path("runs/x"), change))
    flat = " ".join(message.split())
    assert "..." not in message and all(" ".join(line.split()) in flat for line in change.diff)
    # one change a line or more, each within 80 columns with its "error: " (#49)
    assert all(len("error: " + line) <= 80 for line in message.splitlines())
    assert message.splitlines()[-1].startswith("use another --out, or --allow-grid-change")
    assert message.index("models") < message.index("decoding.temperature")
    assert message.index("run.arms") < message.index("endpoints[spare0]")


def test_a_model_added_or_removed_is_one_line_and_graphs_compare_as_graphs() -> None:
    # Issue #49: the demo's directory, then a run of another model and graph into it, listed
    # every field of both models ("compile_model (none) -> null") and steps/density against
    # graphs; now a model is one line and the graphs compare in one form.
    old = make_grid(seeds="100-101", steps=10, arms=("raw",))
    new = make_grid(seeds="100-101", steps=5, arms=("raw",))
    new_data = msgspec.to_builtins(new)
    new_data["models"] = [{"name": "scripted/perfect", "endpoint": "embedded"}]
    change = compare_grids(msgspec.to_builtins(old), msgspec.convert(new_data, type(new)))
    models = [line for line in change.diff if line.startswith("models")]
    assert len(models) == 2 and {m.rsplit(" ", 1)[1] for m in models} == {"added", "removed"}
    assert "null" not in " ".join(change.diff)
    graphs = [line for line in change.diff if line.startswith("run.")]
    assert graphs == ['run.graphs [{"steps":10,"density":0.3}] -> [{"steps":5,"density":0.3}]']


def test_a_field_added_since_the_manifest_is_no_change() -> None:
    grid = make_grid(seeds="100-101", steps=5)
    old_data = msgspec.to_builtins(grid)
    for e in old_data["endpoints"]:
        e.pop("replica_slots", None)
    change = compare_grids(old_data, grid)
    assert change.same and change.compatible
