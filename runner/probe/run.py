"""``ladder probe``: re-ask the trap turns of a finished run (Appendix A.4, Table 3).

Reads the run's manifest (its grid: models, endpoints, decoding, paraphrase cache) and its
episode logs; for each completed episode of the chosen arm, finds the trap turns
(:func:`protocol.probe.turns.find_traps`), rebuilds the messages the agent saw, and re-asks each
variant on the run's endpoint client and limiter (:func:`runner.execution.connect.open_endpoints`,
``ModelConfig.chat_kwargs``): once greedy (temperature 0) and ``samples`` times at the
model card's sampling settings (:mod:`runner.probe.model_cards`; flags override). Episodes of the
tool harness are probed the same way (the paper's "with tools" rows): their requests
rebuild from the log too, and a re-ask re-executes when it calls the done step's tool.
Each reply is scored on the spot (:func:`scoring.analyses.probe.score_reask`) and appended as one
typed :class:`protocol.probe.turns.ProbeRecord` line to ``OUT/probe.jsonl``; a rerun skips the
(episode, turn, variant, decoding, sample) keys already there (resumable).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import msgspec
import orjson

from protocol.draws import DRAW_HEADER, draw_key
from protocol.episode.generate import generate
from protocol.probe.history import books_with_actions, realized_states
from protocol.probe.turns import (
    VARIANTS,
    Decoding,
    ProbeRecord,
    TrapTurn,
    Variant,
    find_traps,
    variant_messages,
)
from protocol.records import Episode, EpisodeRecord, EpisodeSpec, TurnKind
from protocol.state.machine import TaskState
from runner.client.affinity import affinity_key
from runner.client.endpoint import Endpoint
from runner.execution.connect import open_endpoints, preflight
from runner.files import JsonlAppender, lines, read_regular, write_atomic
from runner.grid.expand import Grid, parse_grid
from runner.grid.schema import ModelConfig, redact_url
from runner.probe.model_cards import Sampling, card_sampling
from runner.rundir.logs import read_logs
from runner.rundir.manifest import MANIFEST
from scoring.analyses.probe import score_reask
from serve.config import ServerConfig

__all__ = [
    "PROBE_LOG",
    "PROBE_META",
    "ProbeError",
    "ProbeOptions",
    "ProbeSummary",
    "load_run_grid",
    "read_probe",
    "run_probe",
    "sampling_for",
]

PROBE_LOG = "probe.jsonl"
PROBE_META = "probe.json"  # the settings a probe directory was made with
_DECODER = msgspec.json.Decoder(ProbeRecord)
_ENCODER = msgspec.json.Encoder()


class ProbeError(ValueError):
    """A bad run directory or option: one line for the command line."""


@dataclass
class ProbeOptions:
    arm: str = "raw"
    variants: tuple[Variant, ...] = VARIANTS
    kinds: tuple[TurnKind, ...] = ("redo_probe",)
    samples: int = 8
    greedy: bool = True
    # None: the model card's setting (runner.probe.model_cards); top_p / top_k 0: not sent.
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    model: str | None = None  # only this model's cells (default: every model of the grid)
    limit: int | None = None  # at most this many trap turns per model (in log order)
    concurrency: int = 32


@dataclass
class ProbeSummary:
    traps: int = 0
    planned: int = 0
    skipped: int = 0  # already in the probe log
    asked: int = 0
    not_applicable: int = 0  # (trap, variant) pairs a variant does not apply to
    by_variant: dict[str, int] = field(default_factory=dict)  # re-asks made
    reexecuted: dict[str, int] = field(default_factory=dict)  # of which re-executed
    sampling: dict[str, Sampling] = field(default_factory=dict)  # per model probed


def sampling_for(model: ModelConfig, opts: ProbeOptions) -> Sampling:
    """The sampled re-asks' settings for ``model``: its card's, each flag given overriding."""
    card = card_sampling(model)
    if opts.temperature is None and opts.top_p is None and opts.top_k is None:
        return card
    return Sampling(
        temperature=card.temperature if opts.temperature is None else opts.temperature,
        top_p=card.top_p if opts.top_p is None else (opts.top_p or None),
        top_k=card.top_k if opts.top_k is None else (opts.top_k or None),
        min_p=card.min_p,
        source=f"flags over {card.source}",
    )


def trusted_endpoints(grid: Grid, named: Grid | None, api_key_env: str | None) -> Grid:
    """``grid`` (read back from a run's manifest, a file this command did not write) with
    endpoints a user named: a manifest may name any server and any environment variable, so
    its ``api_key_env`` is never used. ``named`` (a grid file given with ``--grid``): its
    endpoints replace the manifest's, keys included; ``api_key_env`` (``--api-key-env``):
    the key variable of every endpoint. Neither: the manifest's endpoints, sent no key."""
    endpoints = [msgspec.structs.replace(e, api_key_env=None) for e in grid.endpoints]
    if named is not None:
        mine = {e.name: e for e in named.endpoints}
        missing = [e.name for e in endpoints if e.name not in mine]
        if missing:
            raise ProbeError(
                f"--grid names no endpoint {', '.join(map(repr, missing))} of the run's grid"
            )
        endpoints = [mine[e.name] for e in endpoints]
    if api_key_env is not None:
        endpoints = [msgspec.structs.replace(e, api_key_env=api_key_env) for e in endpoints]
    return msgspec.structs.replace(grid, endpoints=endpoints)


def endpoint_lines(grid: Grid) -> list[str]:
    """One line per endpoint the models use: its name, URL(s) (credentials redacted) and
    the key variable, as printed before any of them is contacted."""
    used = {m.endpoint for m in grid.models}
    out = []
    for e in grid.endpoints:
        if e.name in used:
            key = f"key from ${e.api_key_env}" if e.api_key_env else "no key"
            urls = ", ".join(redact_url(u) for u in e.urls())
            out.append(f"endpoint {e.name}: {urls} ({key})")
    return out


def load_run_grid(run_dir: Path) -> Grid:
    path = run_dir / MANIFEST
    if not path.is_file():
        raise ProbeError(f"{run_dir}: no {MANIFEST} (not a run directory)")
    try:  # the manifest's key variables are not needed: they are never used
        data = orjson.loads(read_regular(path, follow=False))
        return parse_grid(data["grid"], source=str(path), need_keys=False)
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError) as e:
        raise ProbeError(f"{path}: unreadable manifest ({e})") from None


def read_probe(out: Path) -> list[ProbeRecord]:
    """The probe records in ``out`` (a torn last line, from a kill, is skipped)."""
    path = out / PROBE_LOG
    if not path.exists():
        return []
    records: list[ProbeRecord] = []
    for _, line, _, _ in lines(path):  # a regular file, a line at a time (capped)
        if line is None or not line.strip():
            continue
        try:
            records.append(_DECODER.decode(line))
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
    return records


@dataclass(frozen=True)
class _Job:
    record: EpisodeRecord
    episode: Episode
    trap: TrapTurn
    variant: Variant
    decoding: Decoding
    sample: int
    messages: list[dict[str, str]]


def _draw_header(job: _Job) -> dict[str, str] | None:
    """The trap turn's draw key as the run sent it (protocol.draws; none in older logs)."""
    rec = job.record
    turn = rec.turns[job.trap.position].draw_turn
    return {DRAW_HEADER: draw_key(rec.spec.seed, turn, 0, rec.trial)} if turn else None


def _episodes(records: Sequence[EpisodeRecord], grid: Grid) -> dict[EpisodeSpec, Episode]:
    paraphrases = grid.paraphrases()
    out: dict[EpisodeSpec, Episode] = {}
    for r in records:
        if r.spec not in out:
            out[r.spec] = generate(r.spec, paraphrases)
    return out


def _jobs(
    records: Sequence[EpisodeRecord],
    episodes: dict[EpisodeSpec, Episode],
    opts: ProbeOptions,
    summary: ProbeSummary,
) -> Iterator[_Job]:
    traps: dict[str, int] = {}  # per model
    for rec in records:
        ep = episodes[rec.spec]
        states: list[TaskState] = realized_states(rec, ep)
        for trap in find_traps(rec, ep, opts.kinds, states=states):
            model = rec.cell.model
            if opts.limit is not None and traps.get(model, 0) >= opts.limit:
                break
            traps[model] = traps.get(model, 0) + 1
            summary.traps += 1
            for v in opts.variants:
                messages = variant_messages(rec, ep, trap, v, states[trap.position])
                if messages is None:
                    summary.not_applicable += 1
                    continue
                draws: list[tuple[Decoding, int]] = [("greedy", 0)] if opts.greedy else []
                draws += [("sampled", i) for i in range(opts.samples)]
                for decoding, i in draws:
                    yield _Job(rec, ep, trap, v, decoding, i, messages)


def _selected(run_dir: Path, grid: Grid, opts: ProbeOptions) -> list[EpisodeRecord]:
    logs = read_logs(run_dir)
    if opts.arm not in {c.arm for c in grid.cells()} and not any(
        r.cell.arm == opts.arm for r in logs.values()
    ):
        raise ProbeError(f"arm {opts.arm!r} is not in the run's grid")
    out = [
        r
        for _, r in sorted(logs.items())
        if r.cell.arm == opts.arm
        and r.termination == "completed"
        and (opts.model is None or r.cell.model == opts.model)
    ]
    return out


_SAMPLING_KEYS = ("temperature", "top_p", "top_k", "min_p")
_GREEDY = Sampling(temperature=0.0, source="greedy")  # the greedy re-ask: nothing else sent


def _check_meta(
    out: Path, run_dir: Path, opts: ProbeOptions, sampling: dict[str, Sampling]
) -> None:
    """Record the settings that make a probe record what it is (arm, each model's sampling);
    a resumed probe must use the same ones (variants, kinds, samples, limit and the models
    probed may grow)."""
    now = {m: {k: getattr(s, k) for k in _SAMPLING_KEYS} for m, s in sampling.items()}
    path = out / PROBE_META
    meta: dict[str, Any] = {"run_dir": str(run_dir.resolve()), "arm": opts.arm, "sampling": {}}
    if path.exists():
        try:
            meta = orjson.loads(read_regular(path, follow=False))
            if not isinstance(meta, dict):
                raise ValueError("not an object")
        except (OSError, ValueError):  # orjson.JSONDecodeError is a ValueError
            raise ProbeError(f"{path} is unreadable; move it away to start over") from None
        if meta.get("arm") != opts.arm:
            raise ProbeError(
                f"{out} was probed with arm={meta.get('arm')!r}; use the same settings or "
                "another --out"
            )
        before: dict[str, Any] = meta.setdefault("sampling", {})
        for m, want in now.items():
            # a probe directory of the first layout held one temperature and top_p
            old = before.get(m) or (
                {"temperature": meta["temperature"], "top_p": meta.get("top_p")}
                if "temperature" in meta
                else None
            )
            if old is None:
                continue
            diff = [k for k in _SAMPLING_KEYS if k in old and old[k] != want[k]]
            if diff:
                was = ", ".join(f"{k}={old[k]!r}" for k in diff)
                raise ProbeError(
                    f"{out} was probed with {was} for {m}; use the same settings or another --out"
                )
        if all(m in before for m in now):
            return
    meta["sampling"] = {**meta.get("sampling", {}), **now}
    write_atomic(path, orjson.dumps(meta, option=orjson.OPT_INDENT_2))  # never via a link


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
    :func:`trusted_endpoints`; ``on_endpoint`` hears each one before it is contacted. With
    ``check``, the probed models' endpoints get the run's preflight first (one tiny request
    each; ``on_line`` hears its line) and a model that does not answer is a
    :class:`ProbeError` before any re-ask (#40)."""
    grid = trusted_endpoints(load_run_grid(run_dir), endpoints_grid, api_key_env)
    records = _selected(run_dir, grid, opts)
    episodes = _episodes(records, grid)
    summary = ProbeSummary()
    for name in dict.fromkeys(r.cell.model for r in records):
        summary.sampling[name] = sampling_for(grid.model(name), opts)
    out.mkdir(parents=True, exist_ok=True)
    _check_meta(out, run_dir, opts, summary.sampling)
    done = {r.key() for r in read_probe(out)}
    jobs: list[_Job] = []
    for job in _jobs(records, episodes, opts, summary):
        summary.planned += 1
        key = (job.record.episode_id, job.trap.index, job.variant, job.decoding, job.sample)
        if key in done:
            summary.skipped += 1
        else:
            jobs.append(job)
    if on_plan is not None:
        on_plan(summary, len(jobs))  # the re-asks to make now (the progress bar's total)
    if not jobs:
        return summary
    path = out / PROBE_LOG
    out_file = JsonlAppender(path, sync=False)  # a torn last line (a kill) is ended first
    try:
        if on_endpoint is not None:
            for line in endpoint_lines(grid):
                on_endpoint(line)
        async with open_endpoints(grid, server_config=server_config) as endpoints:
            if check:
                await _preflight(grid, endpoints, {r.cell.model for r in records}, on_line)
            limit = anyio.CapacityLimiter(opts.concurrency)

            async def ask(job: _Job) -> None:
                async with limit:
                    model = grid.model(job.record.cell.model)
                    kw = model.chat_kwargs(grid.decoding, "agent")
                    extra = dict(kw["extra"])
                    sampling = _GREEDY
                    if job.decoding == "sampled":
                        sampling = summary.sampling[job.record.cell.model]
                        extra.update(sampling.body())
                        extra["seed"] = job.sample
                    reply = await endpoints[model.endpoint].chat(
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
                        headers=_draw_header(job),
                    )
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
                line = ProbeRecord(
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
                out_file.write(_ENCODER.encode(line) + b"\n")  # one append per line
                summary.asked += 1
                summary.by_variant[job.variant] = summary.by_variant.get(job.variant, 0) + 1
                if score.reexecuted:
                    summary.reexecuted[job.variant] = summary.reexecuted.get(job.variant, 0) + 1
                if on_record is not None:
                    on_record(line)

            async with anyio.create_task_group() as tg:
                for job in jobs:
                    tg.start_soon(ask, job)
    finally:
        out_file.close()
    return summary
