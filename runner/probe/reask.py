"""``ladder probe``: re-ask the trap turns of a finished run (Appendix A.4, Table 3).

Reads the run's manifest (its grid: models, endpoints, decoding, paraphrase cache) and its
episode logs; for each completed episode of the chosen arm, finds the trap turns
(:func:`protocol.probe.turns.find_traps`), rebuilds the messages the agent saw
(:mod:`runner.probe.traps`), and re-asks each variant on the run's endpoint client and limiter
(:func:`runner.execution.connect.open_endpoints`, ``ModelConfig.chat_kwargs``): once greedy
(temperature 0) and ``samples`` times at the model card's sampling settings
(:mod:`runner.probe.model_cards`; flags override, :mod:`runner.probe.options`). Episodes of the
tool harness are probed the same way (the paper's "with tools" rows): their requests
rebuild from the log too, and a re-ask re-executes when it calls the done step's tool.
Each reply is scored on the spot (:func:`scoring.analyses.probe.score_reask`) and appended as one
typed :class:`protocol.probe.turns.ProbeRecord` line to ``OUT/probe.jsonl``; a rerun skips the
(episode, turn, variant, decoding, sample) keys already there (resumable,
:mod:`runner.probe.probe_dir`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import msgspec

from protocol.probe.history import books_with_actions
from protocol.probe.turns import ProbeRecord
from protocol.records import EpisodeRecord
from runner.client.affinity import affinity_key
from runner.client.endpoint import Endpoint, Reply
from runner.execution.connect import open_endpoints, preflight
from runner.files import JsonlAppender
from runner.grid.expand import Grid
from runner.probe.model_cards import Sampling
from runner.probe.options import GREEDY, ProbeError, ProbeOptions, ProbeSummary, sampling_for
from runner.probe.probe_dir import PROBE_LOG, check_meta, read_probe
from runner.probe.traps import (
    Job,
    draw_header,
    endpoint_lines,
    jobs,
    load_run_grid,
    regenerate,
    selected_records,
    trusted_endpoints,
)
from scoring.analyses.probe import ProbeScore, score_reask
from serve.config import ServerConfig

__all__ = ["run_probe"]

_ENCODER = msgspec.json.Encoder()


async def _preflight(
    grid: Grid,
    endpoints: dict[str, Endpoint],
    models: set[str],
    on_line: Callable[[str], None] | None,
) -> None:
    from runner.execution.live import preflight_line

    probed = msgspec.structs.replace(grid, models=[m for m in grid.models if m.name in models])
    used = {m.endpoint for m in probed.models}
    if on_line is not None:  # the endpoints were named already (on_endpoint)
        on_line(preflight_line({k: v for k, v in endpoints.items() if k in used}))
    problems = await preflight(probed, endpoints)
    if problems:
        raise ProbeError("; ".join(problems))


def _todo(
    records: Sequence[EpisodeRecord],
    grid: Grid,
    opts: ProbeOptions,
    summary: ProbeSummary,
    out: Path,
) -> list[Job]:
    """The re-asks not yet in ``out`` (each planned one counted, each done one skipped)."""
    episodes = regenerate(records, grid)
    done = {r.key() for r in read_probe(out)}
    todo: list[Job] = []
    for job in jobs(records, episodes, opts, summary):
        summary.planned += 1
        key = (job.record.episode_id, job.trap.index, job.variant, job.decoding, job.sample)
        if key in done:
            summary.skipped += 1
        else:
            todo.append(job)
    return todo


async def run_probe(
    run_dir: Path,
    out: Path,
    opts: ProbeOptions,
    *,
    on_record: Callable[[ProbeRecord], None] | None = None,
    on_plan: Callable[[ProbeSummary, int], None] | None = None,
    server_config: ServerConfig | None = None,
    endpoints_grid: Grid | None = None,
    api_key_env: str | None = None,
    on_endpoint: Callable[[str], None] | None = None,
    on_line: Callable[[str], None] | None = None,
    check: bool = True,
) -> ProbeSummary:
    """Re-ask every trap turn of ``opts.arm`` in ``run_dir`` under each variant; append the
    scored replies to ``out/probe.jsonl``. Endpoints and their keys: see
    :func:`runner.probe.traps.trusted_endpoints`; ``on_endpoint`` hears each one before it is
    contacted. With ``check``, the probed models' endpoints get the run's preflight first (one
    tiny request each; ``on_line`` hears its line) and a model that does not answer is a
    :class:`ProbeError` before any re-ask (#40)."""
    grid = trusted_endpoints(load_run_grid(run_dir), endpoints_grid, api_key_env)
    records = selected_records(run_dir, grid, opts)
    summary = ProbeSummary()
    for name in dict.fromkeys(r.cell.model for r in records):
        summary.sampling[name] = sampling_for(grid.model(name), opts)
    out.mkdir(parents=True, exist_ok=True)
    check_meta(out, run_dir, opts, summary.sampling)
    todo = _todo(records, grid, opts, summary, out)
    if on_plan is not None:
        on_plan(summary, len(todo))  # the re-asks to make now (the progress bar's total)
    if not todo:
        return summary
    out_file = JsonlAppender(out / PROBE_LOG, sync=False)  # a torn last line is ended first
    try:
        if on_endpoint is not None:
            for line in endpoint_lines(grid):
                on_endpoint(line)
        async with open_endpoints(grid, server_config=server_config) as endpoints:
            if check:
                await _preflight(grid, endpoints, {r.cell.model for r in records}, on_line)
            asker = _Asker(grid, endpoints, summary, out_file, on_record, opts.concurrency)
            async with anyio.create_task_group() as tg:
                for job in todo:
                    tg.start_soon(asker.ask, job)
    finally:
        out_file.close()
    return summary


class _Asker:
    """Makes one re-ask at a time per limiter slot, scores it, appends its line and tallies
    it in the summary."""

    def __init__(
        self,
        grid: Grid,
        endpoints: dict[str, Endpoint],
        summary: ProbeSummary,
        out_file: JsonlAppender,
        on_record: Callable[[ProbeRecord], None] | None,
        concurrency: int,
    ) -> None:
        self.grid, self.endpoints, self.summary = grid, endpoints, summary
        self.out_file, self.on_record = out_file, on_record
        self.limit = anyio.CapacityLimiter(concurrency)

    async def _reply(self, job: Job) -> tuple[Reply, Sampling]:
        async with self.limit:
            model = self.grid.model(job.record.cell.model)
            kw = model.chat_kwargs(self.grid.decoding, "agent")
            extra = dict(kw["extra"])
            sampling = GREEDY
            if job.decoding == "sampled":
                sampling = self.summary.sampling[job.record.cell.model]
                extra.update(sampling.body())
                extra["seed"] = job.sample
            reply = await self.endpoints[model.endpoint].chat(
                kw["model"],
                job.messages,
                max_tokens=kw["max_tokens"],
                role="agent",
                thinking=kw["thinking"],
                extra=extra,
                temperature=sampling.temperature,
                # the episode's replica: its re-asks share the logged history's
                # prefix (runner.client.affinity), jobs are started trap by trap
                affinity=affinity_key(job.record.cell, job.record.spec),
                headers=draw_header(job),
            )
        return reply, sampling

    async def ask(self, job: Job) -> None:
        reply, sampling = await self._reply(job)
        rec, trap = job.record, job.trap
        used = [t.work_order for t in rec.turns[: trap.position] if t.work_order]
        wo = None if job.variant == "no_work_order" else trap.work_order
        score = score_reask(
            reply.content,
            job.episode,
            trap.step,
            wo,
            tools=books_with_actions(rec),
            used_work_orders=[*used, *([trap.work_order] if trap.work_order else [])],
        )
        line = _probe_record(job, reply, sampling, score)
        self.out_file.write(_ENCODER.encode(line) + b"\n")  # one append per line
        summary = self.summary
        summary.asked += 1
        summary.by_variant[job.variant] = summary.by_variant.get(job.variant, 0) + 1
        if score.reexecuted:
            summary.reexecuted[job.variant] = summary.reexecuted.get(job.variant, 0) + 1
        if self.on_record is not None:
            self.on_record(line)


def _probe_record(job: Job, reply: Reply, sampling: Sampling, score: ProbeScore) -> ProbeRecord:
    rec, trap = job.record, job.trap
    return ProbeRecord(
        episode_id=rec.episode_id or f"{rec.cell.slug()}/{rec.spec.seed}",
        slug=rec.slug or rec.cell.slug(),
        seed=rec.spec.seed,
        model=rec.cell.model,
        arm=rec.cell.arm,
        position=trap.position,
        turn=trap.index,
        kind=trap.kind,
        step=trap.step,
        work_order=trap.work_order,
        variant=job.variant,
        decoding=job.decoding,
        sample=job.sample,
        temperature=sampling.temperature,
        top_p=sampling.top_p,
        top_k=sampling.top_k,
        min_p=sampling.min_p,
        harness=rec.cell.knobs.harness,
        reply=reply.content,
        reasoning=reply.reasoning,
        reexecuted=score.reexecuted,
        said_done=score.said_done,
        said_done_then_booked=score.said_done_then_booked,
        recorded_rebooked=trap.recorded_rebooked,
        prompt_tokens=reply.call.prompt_tokens,
        completion_tokens=reply.call.completion_tokens,
        synthetic=rec.synthetic,
    )
