"""A page of a large run's overview asked while scipy's statistics are still loading (#50):
it answers without them (a cell's Wilson interval needs no scipy), says that the contrasts
wait, shows them on the next refresh once scipy is in, and the complete page is the one built
in one go with every interval from scipy, byte for byte."""

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
import runner.viewer.data as data_mod
import runner.viewer.index as index_mod
import scoring.results.stats as stats_mod
from runner.viewer.data import CONTRASTS_PENDING, RunView
from scoring.display.models import CellsView
from tests.view_run import make_run

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("pendingrun"))


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


def test_a_page_while_scipy_loads_has_the_cells_and_says_the_contrasts_wait(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, bg = _copies(run_dir, tmp_path)
    with monkeypatch.context() as m:  # today's overview: every interval from scipy
        m.setattr(stats_mod, "_wilson_95", _scipy_wilson_95)
        expected = RunView(one).cells()
    assert expected.contrasts and expected.cells
    _on_two_workers(monkeypatch)
    loaded = [False]
    monkeypatch.setattr(data_mod, "stats_loaded", lambda: loaded[0])
    real = stats_mod.binomtest

    def guarded(k: int, n: int, p: float = 0.5) -> Any:  # the build's thread may wait
        if threading.current_thread() is threading.main_thread() and not loaded[0]:
            raise AssertionError("a page asked scipy before its import was done")
        return real(k, n, p)

    monkeypatch.setattr(stats_mod, "binomtest", guarded)
    tails = stats_mod._binom_tails

    def guarded_tails() -> tuple[Any, Any] | None:  # the p-values' own import (#50)
        if threading.current_thread() is threading.main_thread() and not loaded[0]:
            raise AssertionError("a page asked scipy before its import was done")
        return tails()

    monkeypatch.setattr(stats_mod, "_binom_tails", guarded_tails)
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
    assert page.indexing.pending == CONTRASTS_PENDING
    assert page.contrasts == []
    assert [c.line for c in page.cells] == [c.line for c in expected.cells]
    loaded[0] = True  # scipy in: the next refresh has the contrasts
    later = view.cells()
    assert later.indexing is not None and later.indexing.pending == ""
    assert later.contrasts == expected.contrasts
    hold.set()
    assert view.index.built(60)
    done = view.cells()
    assert done.indexing is None
    assert _encoded(done) == _encoded(expected)


# A real slow import: scipy's module held before it runs until released (the viewer's thread
# that imports it waits there holding scipy's import lock, as a slow import holds it; a finder
# that waited itself would hold every import: Python calls finders under its global lock).
_SCRIPT = """
import importlib.abc, importlib.machinery, json, sys, threading, time
from pathlib import Path

release = threading.Event()


class Held(importlib.abc.Loader):
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        release.wait()
        self.loader.exec_module(module)


class Slow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "scipy":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        spec.loader = Held(spec.loader)
        return spec


sys.meta_path.insert(0, Slow())
import msgspec
import runner.viewer.build as build_mod
import runner.viewer.index as index_mod
from runner.viewer.data import RunView

index_mod.cores = lambda: 2
index_mod.MIN_PARALLEL_BYTES = 0
build_mod.config_groups = lambda paths, **_: [[str(p)] for p in paths]
one, bg = Path(sys.argv[1]), Path(sys.argv[2])
view = RunView(bg, background=True)


def page():
    got = []
    t = threading.Thread(target=lambda: got.append(view.cells()), daemon=True)
    t.start()
    t.join(60)
    return got[0] if got else None


first = page()
for _ in range(600):
    progress = view.index.progress()
    if progress is not None and progress.episodes:
        break
    time.sleep(0.05)
shown = page()
scipy = sorted(m for m in sys.modules if m.split(".")[0] == "scipy")
release.set()
assert view.index.built(120)
done = view.cells()
enc = lambda v: msgspec.json.encode(msgspec.structs.replace(v, run="")).decode()
print(json.dumps({
    "first": first is not None and first.indexing is not None,
    "shown": None if shown is None else msgspec.to_builtins(shown),
    "scipy": scipy,
    "done": enc(done),
    "expected": enc(RunView(one).cells()),
}))
"""


def test_a_page_does_not_wait_on_a_slow_scipy_import(run_dir: Path, tmp_path: Path) -> None:
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
    shown = got["shown"]
    assert shown is not None, "the page with the first episodes waited on scipy"
    assert shown["indexing"]["episodes"] > 0 and shown["cells"]
    assert shown["indexing"]["pending"] == CONTRASTS_PENDING
    assert shown["contrasts"] == []
    assert got["scipy"] == ["scipy"]  # its import under way, none of its statistics in
    assert got["done"] == got["expected"]
