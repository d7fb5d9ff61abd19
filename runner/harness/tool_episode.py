"""One harness episode, start to finish: ``run_harness_episode(ctx) -> EpisodeRecord``.

The same contract as :func:`runner.execution.episode_loop.run_episode` (which hands harness cells here): no
side effects outside the episode's temporary workspace, which is removed when it ends; an
infrastructure failure ends the episode with its termination reason. Before the workspace
goes, its stamps are read back and must be exactly the receipts the log holds (one stamp per
executed call, none for a refused one).
"""

from __future__ import annotations

import time

from protocol.arms.table import harness_arms
from protocol.records import EpisodeRecord
from runner.arms import EpisodeContext, make_arm
from runner.client.endpoint import CallFailed
from runner.harness.graph import run_graph
from runner.harness.play import Play
from runner.harness.workspace import Workspace, stamp_text

__all__ = ["WorkspaceMismatch", "run_harness_episode"]


class WorkspaceMismatch(RuntimeError):
    """The workspace's stamps differ from the logged receipts: a harness bug."""


async def run_harness_episode(ctx: EpisodeContext) -> EpisodeRecord:
    if ctx.cell.arm not in harness_arms():
        raise ValueError(
            f"the tool harness runs the arms {', '.join(harness_arms())}, not {ctx.cell.arm!r}"
        )
    arm = make_arm(ctx)
    started = time.time()
    t0 = time.perf_counter()
    failure: CallFailed | None = None
    with Workspace.open() as workspace:
        play = Play(ctx, arm, workspace)
        try:
            await play.prepare()
            await run_graph(play)
        except CallFailed as e:
            failure = e
        _check(workspace, play)
    return arm.episode_record(play.turns, started, t0, failure)


def _check(workspace: Workspace, play: Play) -> None:
    logged = {
        c.receipt: stamp_text(c.tool, c.work_order)
        for t in [*play.turns]
        for c in t.tool_calls
        if c.receipt is not None
    }
    logged.update(
        {c.receipt: stamp_text(c.tool, c.work_order) for c in play.tool_calls if c.receipt}
    )
    on_disk = workspace.receipts()
    if on_disk != logged:
        raise WorkspaceMismatch(
            f"workspace holds {len(on_disk)} stamps, the log {len(logged)} receipts"
        )
