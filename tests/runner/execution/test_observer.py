"""runner.execution.observer: a library caller's hooks hear the whole run."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from protocol.records import EpisodeRecord
from runner.execution.grid_run import run_async
from runner.execution.observer import RunObserver
from runner.grid.expand import parse_grid
from runner.rundir.logs import read_logs
from scoring.results.lines import CellLine, ResultLine


class Recorder(RunObserver):
    def __init__(self) -> None:
        self.notices: list[str] = []
        self.results: list[ResultLine] = []
        self.records: list[EpisodeRecord] = []

    def on_notice(self, text: str) -> None:
        self.notices.append(text)

    def on_result(self, line: ResultLine) -> None:
        self.results.append(line)

    def on_episode_end(self, record: EpisodeRecord) -> None:
        self.records.append(record)


class OnlyEpisodes(RunObserver):  # the other hooks are the protocol's no-ops
    def __init__(self) -> None:
        self.n = 0

    def on_episode_end(self, record: EpisodeRecord) -> None:
        self.n += 1


def _grid(seeds: str) -> dict[str, object]:
    return {
        "run": {"seeds": seeds, "graphs": [{"steps": 5, "density": 0.3}], "arms": ["raw"]},
        "endpoints": [{"name": "embedded", "base_url": "embedded", "max_in_flight": 8}],
        "models": [{"name": "scripted/perfect", "endpoint": "embedded"}],
    }


async def test_observers_hear_every_notice_result_and_episode(tmp_path: Path) -> None:
    seen, few = Recorder(), OnlyEpisodes()  # the hooks not overridden are no-ops
    console = Console(file=io.StringIO())
    await run_async(
        parse_grid(_grid("100-102")), tmp_path, console=console, live=False,
        observers=[seen, few],
    )  # fmt: skip
    logged = read_logs(tmp_path)
    assert (
        sorted(r.spec.seed for r in seen.records)
        == [100, 101, 102]
        == sorted(r.spec.seed for r in logged.values())
    )
    assert few.n == 3
    cells = [x for x in seen.results if isinstance(x, CellLine)]
    assert cells and all(c.cell.arm == "raw" for c in cells)
    assert any(n.startswith("preflight") for n in seen.notices)
    assert any(n.startswith("final results:") for n in seen.notices)
    resumed = Recorder()
    await run_async(
        parse_grid(_grid("100-103")), tmp_path, console=console, live=False,
        observers=[resumed],
    )  # fmt: skip
    assert [r.spec.seed for r in resumed.records] == [103]
    assert any(n.startswith(f"resuming {tmp_path}") for n in resumed.notices)
