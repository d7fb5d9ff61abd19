"""The benchmark modules import and expose ``run``; the table prints. No timings here:
timings belong in bench/ (``just bench``)."""

from __future__ import annotations

import importlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from bench.__main__ import CASES, _rows, main, print_table


@pytest.mark.parametrize("case", CASES)
def test_case_module_exposes_run(case: str) -> None:
    module = importlib.import_module(f"bench.bench_{case}")
    assert callable(module.run)


def test_table_prints_rows_and_single_figure_results() -> None:
    results: list[dict[str, Any]] = [
        {"case": "a", "rows": [{"figure": "f", "value": 0.97, "target": ">= 0.95", "holds": True}]},
        {
            "case": "rescore",
            "episodes": 10_000,
            "total_s": 4.0,
            "episodes_per_s": 2500.0,
            "target_s_per_10k": 10.0,
            "holds": True,
        },
        {"case": "b", "figure": "g", "value": None, "target": "info"},
    ]
    assert [r["figure"] for r in _rows(results[0])] == ["f"]
    assert _rows(results[1])[0]["target"] == ">= 1000"
    out = io.StringIO()
    print_table(results, out)
    text = out.getvalue()
    assert "yes" in text and "rescore" in text and "info" in text


def test_unknown_case_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--only", "nonesuch"])
    assert e.value.code == 2
    assert "unknown case" in capsys.readouterr().err


def test_crashed_case_is_a_table_line(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    import bench.__main__ as bm

    monkeypatch.setattr(bm, "CASES", (*bm.CASES, "broken"))
    monkeypatch.setattr(importlib, "import_module", _raising)
    out = tmp_path / "out.jsonl"  # type: ignore[operator]
    assert bm.main(["--only", "broken", "--json", str(out)]) == 1
    line = json.loads(out.read_text().splitlines()[0])
    assert line["case"] == "broken" and "error" in line


def _raising(name: str) -> object:
    raise RuntimeError(f"no {name}")


def test_each_case_prints_as_it_finishes_and_affinity_is_restored(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    import os
    import types

    import bench.__main__ as bm

    out = tmp_path / "out.jsonl"  # type: ignore[operator]
    cores = os.sched_getaffinity(0)
    seen: dict[str, object] = {}

    def pinning(quick: bool = False) -> dict[str, object]:
        os.sched_setaffinity(0, {min(cores)})  # as bench._common.pin does
        return {"case": "first", "rows": [{"figure": "f", "value": 1.0, "target": "info"}]}

    def checking(quick: bool = False) -> dict[str, object]:
        seen["cores"] = os.sched_getaffinity(0)
        seen["lines"] = out.read_text().splitlines()
        seen["stdout"] = capsys.readouterr().out
        return {"case": "second", "rows": []}

    modules = {"bench.bench_first": pinning, "bench.bench_second": checking}
    monkeypatch.setattr(bm, "CASES", ("first", "second"))
    monkeypatch.setattr(
        importlib, "import_module", lambda name: types.SimpleNamespace(run=modules[name])
    )
    assert bm.main(["--only", "first,second", "--json", str(out)]) == 0
    assert seen["cores"] == cores  # the first case's pinning was undone
    assert len(seen["lines"]) == 1  # type: ignore[arg-type]  # its JSON line was already there
    assert "machine calibration" in str(seen["stdout"]) and "first" in str(seen["stdout"])
    assert len(out.read_text().splitlines()) == 2
    tail = capsys.readouterr().out.splitlines()  # where the run's time went (#50)
    last = next(x for x in tail if x.startswith("# case durations (s), longest first: "))
    assert "first " in last and "second " in last and "; sum " in last


def test_the_rescoring_log_built_by_two_processes_is_the_same_bytes(tmp_path: Path) -> None:
    """#50: the bench builds its 14,040-episode log on every core; each (graph, model) part
    is its own cells' files in the same order, so the files equal the serial build's."""
    from bench.bench_rescore import build_log

    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    assert build_log(serial, 2) == build_log(parallel, 2, jobs=2) == 120
    files = sorted(p.relative_to(serial) for p in serial.rglob("*.jsonl"))
    assert len(files) == 60
    assert files == sorted(p.relative_to(parallel) for p in parallel.rglob("*.jsonl"))
    assert all((serial / f).read_bytes() == (parallel / f).read_bytes() for f in files)
