"""The rescoring benchmark runs and prints its line (no timing is asserted here)."""

from __future__ import annotations

import json

import pytest

import bench.bench_rescore as bench_rescore


def test_bench_rescore_quick(capsys: pytest.CaptureFixture[str]) -> None:
    result = bench_rescore.run(quick=True)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("rescore: 480 episodes")
    line = json.loads(out[-1])
    assert line["case"] == "rescore" and line == result
    assert line["episodes"] == line["written"] == 480 and line["cells"] == 60
    assert line["episodes_per_s"] > 0 and line["cores"] >= 1
    figures = [r["figure"] for r in line["rows"]]
    assert any("bare decode" in f for f in figures)
