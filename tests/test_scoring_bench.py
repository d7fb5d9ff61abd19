"""The rescoring benchmark runs and prints its line (no timing is asserted here)."""

from __future__ import annotations

import json

import pytest

from bench.bench_rescore import run


def test_bench_rescore_quick(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(quick=True)
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("rescore")
    line = json.loads(out[-1])
    assert line["case"] == "rescore" and line == result
    assert line["episodes"] == line["written"] == 480 and line["cells"] == 60
    assert line["episodes_per_s"] > 0
