"""Repeated trials (``--trials K``, ``run.trials``; #40): each seed of each cell runs K times,
trial 0 keyed, named and requested exactly as a run without trials; resume per trial; pass^k
in the cell lines; contrasts pair seeds (each seed's majority of trials)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol.records import EpisodeRecord, episode_id, log_key
from runner.execution.agent import trial_seed
from runner.execution.grid_run import RunSummary
from runner.grid.expand import Grid, GridError, expand, parse_grid, trial_warnings
from runner.rundir.manifest import grid_digest
from runner.rundir.records import load_records
from runner.viewer.data import RunView
from scoring.results.compare import compare_runs
from scoring.results.lines import CellLine, ContrastLine
from scoring.results.offline import rescore, score_records
from tests.reliability_kit import SYNTHETIC, grid_data, run_inprocess

ARMS = ("raw", "checklist", "directive", "enforce")


def _grid(trials: int, model: str = SYNTHETIC, temperature: float = 0.7) -> Grid:
    data: dict[str, Any] = grid_data(seeds="100-103", arms=ARMS)
    data["models"] = [{"name": model, "endpoint": "embedded"}]
    data["run"]["trials"] = trials
    data["decoding"]["temperature"] = temperature
    return parse_grid(data)


def _run(grid: Grid, out: Path) -> RunSummary:
    summary, _ = asyncio.run(run_inprocess(grid, out, check=False))
    return summary


def _records(out: Path) -> list[EpisodeRecord]:
    records, _ = load_records(out)
    return records


def test_trial_0_keeps_todays_keys_and_ids() -> None:
    one, three = list(expand(_grid(1))), list(expand(_grid(3)))
    assert len(three) == 3 * len(one)
    assert [t.key() for t in one] == [(t.cell.slug(), t.spec.seed) for t in one]
    assert [t.key() for t in three if t.trial == 0] == [t.key() for t in one]
    slug = one[0].cell.slug()
    assert {t.key()[0] for t in three if t.cell == one[0].cell} == {
        slug,
        f"{slug}#t1",
        f"{slug}#t2",
    }
    assert episode_id(one[0].cell, 100) == f"{slug}/100"
    assert episode_id(one[0].cell, 100, 2) == f"{slug}/100/t2"
    # trial 0 sends what a run without trials sends; trial k the sampling seed k
    assert trial_seed(0) == {} and trial_seed(2) == {"seed": 2}
    # a grid of one trial digests as a grid written before the field
    data: dict[str, Any] = grid_data(seeds="100-103", arms=ARMS)
    assert grid_digest(parse_grid(data)) == grid_digest(_grid(1, temperature=0.0))


def test_trials_below_one_are_refused_and_temperature_0_warns() -> None:
    with pytest.raises(GridError, match="trials must be at least 1"):
        _grid(0)
    with pytest.raises(GridError, match="trials must be at most 1000"):
        _grid(1001)
    assert trial_warnings(_grid(2, temperature=0.0))
    assert not trial_warnings(_grid(2)) and not trial_warnings(_grid(1, temperature=0.0))
    refused = CliRunner().invoke(app, ["run", "--trials", "0", "--seeds", "100"])
    assert refused.exit_code == 2 and "trials must be at least 1" in refused.output


def test_validate_counts_trials_refuses_zero_and_warns_at_temperature_0(tmp_path: Path) -> None:
    grid = tmp_path / "g.toml"
    base = '[[models]]\nname = "scripted/perfect"\n[run]\nseeds = "100-101"\narms = ["raw"]\n'
    grid.write_text(base + "trials = 3\n")
    checked = CliRunner().invoke(app, ["validate", str(grid), "--offline"])
    assert checked.exit_code == 0, checked.output
    assert "1 cell, 6 episodes" in checked.output
    assert "warning: 3 trials per seed at temperature 0" in checked.output
    grid.write_text(base + "trials = 3\n[decoding]\ntemperature = 0.7\n")
    warm = CliRunner().invoke(app, ["validate", str(grid), "--offline"])
    assert warm.exit_code == 0 and "warning" not in warm.output, warm.output
    grid.write_text(base + "trials = 0\n")
    zero = CliRunner().invoke(app, ["validate", str(grid), "--offline"])
    assert zero.exit_code == 2 and "trials must be at least 1" in zero.output


def test_a_synthetic_run_with_two_trials_at_temperature(tmp_path: Path) -> None:
    out = tmp_path / "k2"
    summary, text = asyncio.run(run_inprocess(_grid(2), out, check=False))
    streamed = [x for x in text.splitlines() if x.startswith("    pass^2 strict/da ")]
    assert len(streamed) == 4 and all(len(x) <= 80 for x in streamed), text
    assert summary["episodes_run"] == 4 * 4 * 2 and summary["infrastructure"] == 0
    records = _records(out)
    assert sorted({r.trial for r in records}) == [0, 1] and len(records) == 32
    # the log files are those of a run without trials
    once = tmp_path / "k1"
    _run(_grid(1), once)
    assert sorted(p.name for p in (out / "logs").iterdir()) == sorted(
        p.name for p in (once / "logs").iterdir()
    )
    # trial 0 is the run without trials, episode for episode
    first = {log_key(r): [t.reply for t in r.turns] for r in _records(once)}
    assert {log_key(r): [t.reply for t in r.turns] for r in records if r.trial == 0} == first
    # the trials sample apart: some episode's replies differ between its two trials
    by = {(r.cell, r.seed, r.trial): [t.reply for t in r.turns] for r in records}
    assert any(by[(c, s, 0)] != by[(c, s, 1)] for c, s, t in by if t == 1)
    lines = rescore(records)
    cells = [x for x in lines if isinstance(x, CellLine)]
    assert cells and all(c.n == 8 and c.trials == 2 for c in cells)
    for c in cells:
        for scoring in ("strict", "decline_aware"):
            hats = c.pass_k[scoring]
            assert len(hats) == 2 and hats[0] == pytest.approx(c.rate(scoring))
    # contrasts pair seeds (each seed's majority), never seed x trial pairs
    contrasts = [x for x in lines if isinstance(x, ContrastLine)]
    assert contrasts and all(x.n == 4 for x in contrasts)
    # the viewer's overview counts every trial; its episode list and pages hold every trial
    view = RunView(out)
    shown = view.cells().cells
    assert shown and all(c.line.n == 8 and c.line.trials == 2 for c in shown)
    slug = shown[0].slug
    listed = view.episodes(slug)
    assert listed is not None and listed.total == 8
    assert [(e.seed, e.trial) for e in listed.episodes] == [
        (s, t) for s in range(100, 104) for t in (0, 1)
    ]
    seconds = view.episodes(slug, trial=1)
    assert seconds is not None and [e.seed for e in seconds.episodes] == [100, 101, 102, 103]
    for trial in (0, 1):
        page = view.episode(slug, 101, trial)
        assert page is not None and page.row.trial == trial
        assert [t.reply for t in page.turns] == by[(page.cell, 101, trial)]
        assert len(page.pairs) == 3  # the other arms' same seed and trial
    assert view.episode(slug, 101, 2) is None
    shown_trial = CliRunner().invoke(
        app, ["show", str(out), "--cell", slug, "--seed", "101", "--trial", "1"]
    )
    assert shown_trial.exit_code == 0, shown_trial.output
    assert "seed 101 trial 1" in shown_trial.output.splitlines()[0]
    # ladder score: a pass^k table under each scoring, within 80 columns
    score = CliRunner().invoke(app, ["score", str(out)])
    assert score.exit_code == 0, score.output
    for title in ("pass^k, primary scoring", "pass^k, decline-aware scoring"):
        assert title in score.output
    table = score.output.split("pass^k, primary scoring\n", 1)[1].splitlines()
    assert table[0].split() == ["cfg", "arm", "trials", "pass^1", "pass^2"]
    assert all(len(x) <= 80 for x in score.output.splitlines())
    # ladder compare pairs seeds too: 2 trials' majority against 1 trial, n = the seeds
    k2, k1 = score_records(records), score_records(_records(once))
    compared = compare_runs(k2, k1)
    assert compared and all(x.n == 4 for x in compared)
    # a run of one trial has no pass^k
    assert all(
        c.trials == 1 and c.pass_k == {} for c in rescore(_records(once)) if isinstance(c, CellLine)
    )


def test_the_perfect_agent_passes_every_trial(tmp_path: Path) -> None:
    out = tmp_path / "perfect"
    _run(_grid(3, model="scripted/perfect"), out)
    cells = [x for x in rescore(_records(out)) if isinstance(x, CellLine)]
    assert len(cells) == 4
    for c in cells:
        assert c.trials == 3 and c.n == 12
        assert c.pass_k == {"strict": (1.0, 1.0, 1.0), "decline_aware": (1.0, 1.0, 1.0)}


def test_resume_reruns_only_the_missing_trials(tmp_path: Path) -> None:
    out = tmp_path / "r"
    _run(_grid(2), out)
    log = sorted((out / "logs").iterdir())[0]
    lines = log.read_bytes().splitlines()
    dec = msgspec.json.Decoder(EpisodeRecord)
    # a crash after trial 0 of seed 100: its trial 1 and everything after lost
    cut = next(i for i, x in enumerate(lines) if (r := dec.decode(x)).seed == 100 and r.trial == 1)
    log.write_bytes(b"\n".join(lines[:cut]) + b"\n")
    lost = len(lines) - cut
    again = _run(_grid(2), out)
    assert again["episodes_run"] == lost and again["already_done"] == 32 - lost
    counts: dict[tuple[str, int], int] = {}  # every line of every log, by (cell, seed, trial)
    for path in (out / "logs").iterdir():
        for raw in path.read_bytes().splitlines():
            key = log_key(dec.decode(raw))
            counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 32 and all(v == 1 for v in counts.values()), counts


def test_growing_trials_runs_only_the_new_ones(tmp_path: Path) -> None:
    out = tmp_path / "grow"
    _run(_grid(1), out)
    before = {p.name: p.read_bytes() for p in (out / "logs").iterdir()}
    grown = _run(_grid(3), out)
    assert grown["already_done"] == 16 and grown["episodes_run"] == 32
    for p in (out / "logs").iterdir():  # trial 0's lines untouched, the new trials appended
        assert p.read_bytes().startswith(before[p.name])
    assert sorted({r.trial for r in _records(out)}) == [0, 1, 2]
