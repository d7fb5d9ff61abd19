"""A variant's ``models`` (issue #48): the models that run the variant's cells (every model
when it names none); a name that is not a model of the grid is refused in one line; a grid
that names none keeps its cells and its digest."""

from __future__ import annotations

from typing import Any

import pytest

from runner.grid.errors import GridError
from runner.grid.expand import parse_grid
from runner.rundir.manifest import grid_digest

FIRST, SECOND = "scripted/perfect", "scripted/perfect?drop_system=0"


def _data(**variant: Any) -> dict[str, Any]:
    return {
        "run": {
            "seeds": "100-101",
            "generator": 6,
            "arms": ["raw"],
            "variants": [
                {"arm": "raw", "sessions": 3, "handoff": "note"},
                {"arm": "raw", "sessions": 3, "handoff": "note", "next_model": SECOND, **variant},
            ],
        },
        "models": [{"name": FIRST}, {"name": SECOND}],
    }


def test_a_variant_runs_for_the_models_it_names() -> None:
    cells = parse_grid(_data(models=[FIRST])).cells()
    handed = [c for c in cells if c.knobs.next_model]
    assert [c.model for c in handed] == [FIRST]  # the second never hands to itself
    assert {c.model for c in cells if not c.knobs.next_model} == {FIRST, SECOND}
    assert len(cells) == 2 * 2 + 1


def test_a_variant_naming_none_runs_for_every_model() -> None:
    every = parse_grid(_data()).cells()
    assert [c.model for c in every if c.knobs.next_model] == [FIRST, SECOND]
    assert parse_grid(_data(models=[FIRST, SECOND])).cells() == every


def test_an_unknown_model_is_one_line() -> None:
    with pytest.raises(GridError) as e:
        parse_grid(_data(models=["scripted/perfekt"]))
    msg = str(e.value)
    assert "\n" not in msg and "'scripted/perfekt' is not a model of the grid" in msg
    assert "did you mean 'scripted/perfect'" in msg


def test_a_grid_naming_no_models_keeps_its_digest() -> None:
    assert grid_digest(parse_grid(_data(models=[]))) == grid_digest(parse_grid(_data()))
    assert grid_digest(parse_grid(_data(models=[FIRST]))) != grid_digest(parse_grid(_data()))
