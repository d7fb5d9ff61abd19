"""A page of a large run's overview asked while its index is still being built (#50): it has
the cells and the contrasts of the episodes in so far (a contrast's exact McNemar p-value
imports nothing up to 500 discordant pairs: #50, twelfth round, so no page waits on scipy),
and the complete page at the end is the one built in one go, byte for byte, with every
interval from scipy."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest
from scipy.stats import binomtest

import runner.viewer.build as build_mod
import runner.viewer.index as index_mod
import scoring.results.stats as stats_mod
from runner.viewer.data import RunView
from scoring.display.models import CellsView
from tests.view_run import make_run

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("indexingrun"))


def _scipy_wilson_95(k: int, n: int) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def _copies(run_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    one, bg = tmp_path / "one", tmp_path / "bg"
    for where in (one, bg):
        shutil.copytree(run_dir / "logs", where / "logs")
    return one, bg


def _on_two_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every refresh on two workers, each file a configuration of its own."""
    monkeypatch.setattr(index_mod, "cores", lambda: 2)
    monkeypatch.setattr(index_mod, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(build_mod, "config_groups", lambda paths, **_: [[str(p)] for p in paths])


def _encoded(view: CellsView) -> bytes:
    return msgspec.json.encode(msgspec.structs.replace(view, run=""))


def _hold_the_end(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The build's end (its overview, then no more ``indexing``) held until the event."""
    hold = threading.Event()
    finish = index_mod.RunIndex._finish

    def held(self: index_mod.RunIndex, *args: Any) -> bool:
        hold.wait(60)
        return finish(self, *args)

    monkeypatch.setattr(index_mod.RunIndex, "_finish", held)
    return hold


def test_a_page_while_the_index_fills_has_the_cells_and_the_contrasts(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, bg = _copies(run_dir, tmp_path)
    with monkeypatch.context() as m:  # the overview with every interval from scipy
        m.setattr(stats_mod, "_wilson_95", _scipy_wilson_95)
        expected = RunView(one).cells()
    assert expected.contrasts and expected.cells
    _on_two_workers(monkeypatch)
    hold = _hold_the_end(monkeypatch)
    view = RunView(bg, background=True)
    view.cells()
    for _ in range(600):  # every file in, the end held
        progress = view.index.progress()
        if progress is not None and progress.files == progress.total:
            break
        view.index.built(0.1)
    page = view.cells()
    assert page.indexing is not None and page.indexing.files == page.indexing.total
    assert [c.line for c in page.cells] == [c.line for c in expected.cells]
    assert page.contrasts == expected.contrasts
    hold.set()
    assert view.index.built(60)
    done = view.cells()
    assert done.indexing is None
    assert _encoded(done) == _encoded(expected)


# Any import of scipy or numpy fails: no page of the overview, while the index fills or at
# its end, may ask either (#50, twelfth round; before it, the contrasts waited on scipy).
_SCRIPT = """
import importlib.abc, json, sys, time
from pathlib import Path


class Refused(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("scipy", "numpy"):
            raise ImportError(f"{name}: refused by the test")
        return None


sys.meta_path.insert(0, Refused())
import msgspec
import runner.viewer.build as build_mod
import runner.viewer.index as index_mod
from runner.viewer.data import RunView

index_mod.cores = lambda: 2
index_mod.MIN_PARALLEL_BYTES = 0
build_mod.config_groups = lambda paths, **_: [[str(p)] for p in paths]
one, bg = Path(sys.argv[1]), Path(sys.argv[2])
view = RunView(bg, background=True)
first = view.cells()
while view.cells().indexing is not None:  # a page as each part comes in
    time.sleep(0.02)
assert view.index.built(120)
done = view.cells()
enc = lambda v: msgspec.json.encode(msgspec.structs.replace(v, run="")).decode()
print(json.dumps({
    "first": first.indexing is not None,
    "imported": sorted(m for m in sys.modules if m.split(".")[0] in ("scipy", "numpy")),
    "done": enc(done),
    "expected": enc(RunView(one).cells()),
}))
"""


def test_no_page_asks_scipy_or_numpy(run_dir: Path, tmp_path: Path) -> None:
    one, bg = _copies(run_dir, tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(one), str(bg)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=ROOT,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["first"] is True  # answered while nothing was indexed
    assert got["imported"] == []
    assert json.loads(got["done"])["contrasts"]  # the finished page has them, no scipy asked
    assert got["done"] == got["expected"]
