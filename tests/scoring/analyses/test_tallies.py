"""The per-cell sums the counting tables' Folds finish with (scoring.analyses.tallies)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from protocol.records import CellKey
from scoring.analyses.tallies import by_cell_sums

_CELLS = [CellKey(model="m", steps=6, density=0.3, arm=a) for a in ("raw", "enforce", "hybrid")]
_WIDTH = 4
_TALLY = st.tuples(*[st.one_of(st.booleans(), st.integers(0, 50))] * _WIDTH)


def _copy(cell: CellKey) -> CellKey:
    """An equal cell, another object (records decode one each)."""
    return CellKey(model=cell.model, steps=cell.steps, density=cell.density, arm=cell.arm)


@given(st.lists(st.tuples(st.integers(0, len(_CELLS) - 1), _TALLY), max_size=40))
def test_each_cells_tallies_are_summed_into_ints(
    episodes: list[tuple[int, tuple[int, ...]]],
) -> None:
    values = [(_copy(_CELLS[c]), t) for c, t in episodes]
    got = by_cell_sums(values)
    order = list(dict.fromkeys(_CELLS[c] for c, _ in episodes))
    assert list(got) == order  # the cells in their first episode's order
    for cell, sums in got.items():
        mine = [t for c, t in episodes if _CELLS[c] == cell]
        assert sums == tuple(sum(int(t[i]) for t in mine) for i in range(_WIDTH))
        assert all(type(x) is int for x in sums)  # a bool never reaches a line's JSON
