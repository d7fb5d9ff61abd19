"""A researcher's third hour (#49, items 2-3): the served-by label and the SYNTHETIC banner
in every output that names a cell (show, compare, score, JSON lines, the viewer), and
filters that match a plain model name in every run, name the flag that matched nothing and
suggest the nearest value."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from ladder.app import app
from runner.viewer.data import RunView

HONEST = "qwen3-235b <- scripted/synthetic"


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("labels")
    shape = ["--arms", "raw,enforce", "--steps", "5", "--seeds", "100-101", "--no-live"]
    honest = ["--model", "qwen3-235b", "--served", "scripted/synthetic", "--base-url", "embedded"]
    plain = ["--model", "scripted/synthetic"]
    out = []
    for name, extra in (("h", honest), ("o", plain), ("k", [*plain, "--trials", "2"])):
        result = CliRunner().invoke(app, ["run", *extra, *shape, "--out", str(tmp / name)])
        assert result.exit_code == 0, result.output
        asyncio.set_event_loop_policy(None)
        out.append(tmp / name)
    return out[0], out[1], out[2]


def _cli(*args: object) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def _refused(*args: object) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def test_compare_names_the_served_model_and_warns(runs: tuple[Path, Path, Path]) -> None:
    h, o, _ = runs
    text = _cli("compare", h, o)
    assert f"{HONEST} vs scripted/synthetic" in text
    assert "SYNTHETIC:" in text and "With trials" not in text
    assert all(len(x) <= 80 for x in text.splitlines())
    lines = [orjson.loads(x) for x in _cli("compare", h, o, "--json").splitlines()]
    assert lines and all(x["config"]["label"] == f"{HONEST} vs scripted/synthetic" for x in lines)


def test_compare_says_how_it_counts_trials(runs: tuple[Path, Path, Path]) -> None:
    _, o, k = runs
    text = _cli("compare", o, k)
    assert "With trials: n counts seeds; A k and B k count the seeds whose trials mostly" in text


def test_score_and_json_lines_carry_the_label(runs: tuple[Path, Path, Path]) -> None:
    h, _, _ = runs
    text = _cli("score", h)
    assert text.startswith("SYNTHETIC: cells of qwen3-235b <- scripted/synthetic come")
    lines = [orjson.loads(x) for x in _cli("score", h, "--json").splitlines()]
    cells = [x["cell"] for x in lines if x["type"] == "cell"]
    assert cells and all(c["model"] == "qwen3-235b" and c["label"] == HONEST for c in cells)
    rows = [orjson.loads(x) for x in _cli("score", h, "--episodes", "--json").splitlines()]
    assert len(rows) == 4 and all(r["label"] == HONEST for r in rows)
    cost = [orjson.loads(x) for x in _cli("cost", h, "--json").splitlines()]
    assert cost and all(r["label"] == HONEST for r in cost)


def test_show_and_the_viewer_name_the_served_model(runs: tuple[Path, Path, Path]) -> None:
    h, o, _ = runs
    text = _cli("show", h, "--arm", "raw")
    assert f"model {HONEST}  SYNTHETIC: the scripted synthetic agent" in text
    assert "model scripted/synthetic  SYNTHETIC" in _cli("show", o, "--arm", "raw")
    rv = RunView(h)
    rv.refresh()
    slug = rv.index.slugs()[0]
    listing = rv.episodes(slug)
    assert listing is not None and listing.label == HONEST and listing.synthetic
    view = rv.episode(slug, 100)
    assert view is not None and view.label == HONEST


def test_a_plain_model_name_matches_in_every_run(runs: tuple[Path, Path, Path]) -> None:
    h, o, _ = runs
    lines = [
        orjson.loads(x)
        for x in _cli("score", h, o, "--model", "scripted/synthetic", "--json").splitlines()
    ]
    models = {x["cell"]["model"] for x in lines if x["type"] == "cell"}
    assert models == {f"{h}: qwen3-235b", f"{o}: scripted/synthetic"}
    lines = [
        orjson.loads(x) for x in _cli("score", h, o, "--model", "qwen3-235b", "--json").splitlines()
    ]
    assert {x["cell"]["model"] for x in lines if x["type"] == "cell"} == {f"{h}: qwen3-235b"}
    # the run's own prefix still works
    assert _cli("score", h, o, "--model", f"{o}: scripted/synthetic")


def test_a_filter_that_keeps_nothing_names_its_flag(runs: tuple[Path, Path, Path]) -> None:
    h, o, _ = runs
    line = _refused("score", h, o, "--model", "scripted/synthetc")
    assert line.startswith("error: --model matched no cell in ")
    assert "(did you mean 'scripted/synthetic'?)" in line
    assert "(did you mean 'enforce'?)" in _refused("score", h, "--arm", "enforc,nothing")
    line = _refused("cost", h, "--cell", "procurment")
    assert line.startswith("error: --cell matched no cell: 'procurment' (did you mean")
    assert "'procurement'" in line
    line = _refused("compare", h, o, "--model", "qwen3-235b")
    assert line == f"error: --model matched no cell in {o}: 'qwen3-235b'"
    line = _refused("report", h, "--arm", "raw", "--cell", "enforce")
    assert line == "error: no cell matches --arm, --model and --cell together"


def test_show_prints_the_brief_as_sent(runs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    h, _, _ = runs
    rv = RunView(h)
    rv.refresh()
    slug = next(s for s in rv.index.slugs() if s.endswith("__raw"))
    found = rv.brief(slug, 100)
    assert found is not None and found[1] == "system"
    text = _cli("show", h, "--arm", "raw", "--seed", "100", "--brief")
    assert "brief as sent (the system message, brief_role = system):" in text
    first = found[0].splitlines()[0]
    assert first and f"      {first}" in text.splitlines()
    assert "brief as sent" not in _cli("show", h, "--arm", "raw", "--seed", "100")
    # a model whose brief led the first user turn (brief_role = "user") says so
    manifest = orjson.loads((h / "manifest.json").read_bytes())
    manifest["grid"]["models"][0]["brief_role"] = "user"
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "manifest.json").write_bytes(orjson.dumps(manifest))
    shutil.copytree(h / "logs", copy / "logs")
    text = _cli("show", copy, "--arm", "raw", "--seed", "100", "--brief")
    assert "brief as sent (leading the first user message, brief_role = user):" in text
