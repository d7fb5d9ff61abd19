"""What the probe re-asks: the run's grid read back from its manifest (its endpoints
trusted only as a user named them), the completed episodes of the chosen arm, and one job per
(trap turn, variant, decoding, sample) with the messages the agent saw
(:func:`protocol.probe.turns.find_traps`, :func:`protocol.probe.turns.variant_messages`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
import orjson

from protocol.draws import DRAW_HEADER, draw_key
from protocol.episode.generate import generate
from protocol.probe.history import realized_states
from protocol.probe.turns import Decoding, TrapTurn, Variant, find_traps, variant_messages
from protocol.records import Episode, EpisodeRecord, EpisodeSpec
from protocol.state.machine import TaskState
from runner.files import read_regular
from runner.grid.expand import Grid, parse_grid
from runner.grid.schema import redact_url
from runner.probe.options import ProbeError, ProbeOptions, ProbeSummary
from runner.rundir.logs import read_logs
from runner.rundir.manifest import MANIFEST

__all__ = [
    "Job",
    "draw_header",
    "endpoint_lines",
    "jobs",
    "load_run_grid",
    "regenerate",
    "selected_records",
    "trusted_endpoints",
]


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


@dataclass(frozen=True)
class Job:
    """One re-ask: a trap turn of a logged episode under one variant, decoding and sample."""

    record: EpisodeRecord
    episode: Episode
    trap: TrapTurn
    variant: Variant
    decoding: Decoding
    sample: int
    messages: list[dict[str, str]]


def draw_header(job: Job) -> dict[str, str] | None:
    """The trap turn's draw key as the run sent it (protocol.draws; none in older logs)."""
    rec = job.record
    turn = rec.turns[job.trap.position].draw_turn
    return {DRAW_HEADER: draw_key(rec.spec.seed, turn, 0, rec.trial)} if turn else None


def regenerate(records: Sequence[EpisodeRecord], grid: Grid) -> dict[EpisodeSpec, Episode]:
    """Each record's episode, regenerated from its spec with the run's paraphrases."""
    paraphrases = grid.paraphrases()
    out: dict[EpisodeSpec, Episode] = {}
    for r in records:
        if r.spec not in out:
            out[r.spec] = generate(r.spec, paraphrases)
    return out


def jobs(
    records: Sequence[EpisodeRecord],
    episodes: dict[EpisodeSpec, Episode],
    opts: ProbeOptions,
    summary: ProbeSummary,
) -> Iterator[Job]:
    """Every re-ask of ``records``' trap turns (at most ``opts.limit`` traps per model),
    counting the traps and the variants that do not apply in ``summary``."""
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
                    yield Job(rec, ep, trap, v, decoding, i, messages)


def selected_records(run_dir: Path, grid: Grid, opts: ProbeOptions) -> list[EpisodeRecord]:
    """The run's completed episodes of ``opts.arm`` (and ``opts.model``), in log order."""
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
