"""Offline rescoring throughput: read a grid's logs and rescore every episode, no model.

Builds a synthetic log of at least 10,000 episode records (a grid of 2 models x 5 graph
configurations x 6 arms x 167 seeds = 10,020 records; ``quick``: 8 seeds), written through
``runner.logs.LogWriter`` to a temporary directory. Replies are written from perfect play with
injected errors: re-executions of redo probes, citations inside refusals, refused bookings
(enforce, hybrid) with and without refusal language, stale-work-order re-displays, prose
around every ref line, LEDGER lines closing every reply of the self-ledger arm; user messages carry an arm addition and each turn one call record, so
the lines are about the size a real run writes. Then it times ``read_logs`` plus
``scoring.offline.rescore`` (score every record against its regenerated episode, aggregate
cells and Holm-adjusted contrasts) and prints one table line and one JSON line::

    {"case": "rescore", "episodes": ..., "read_s": ..., "score_s": ..., "episodes_per_s": ...}

Target: 10,000 episodes rescored in under 10 s (read + score) on a 2-core machine.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from protocol import (
    CallRecord,
    CellKey,
    Episode,
    EpisodeRecord,
    EpisodeSpec,
    ScriptedUser,
    Turn,
    TurnRecord,
    Verdict,
    generate,
)
from protocol.arms import ARM_NAMES
from protocol.execution import read_execution
from runner.logs import LogReport, LogWriter, read_logs
from runner.rescore import cores, rescore_dir
from scoring.lines import CellLine, ContrastLine
from scoring.offline import paused_gc, rescore

__all__ = ["run"]

MODELS = ("bench/model-a", "bench/model-b")
GRAPHS = ((5, 0.15), (10, 0.15), (15, 0.15), (18, 0.15), (15, 0.3))
SEEDS = 167  # 2 x 5 x 6 x 167 = 10,020 records
QUICK_SEEDS = 8
TARGET_S = 10.0
# Probability that an episode of an arm carries each injected behaviour.
ERRORS = {
    "raw": {"re_execute": 0.5, "cite": 0.1},
    "checklist": {"re_execute": 0.35, "cite": 0.1},
    "ledger": {"re_execute": 0.25},
    "directive": {"re_execute": 0.1, "cite": 0.3},
    "enforce": {"refuse": 0.3, "refuse_silent": 0.3},
    "hybrid": {"refuse": 0.2},
}
ARMS = tuple(a for a in ARM_NAMES if a in ERRORS)  # the six arms the synthetic log plays


# Each model words its replies its own way (no two records of a grid share a reply).
OPENERS = {
    MODELS[0]: "Carried out {v}: {text}. Everything it needs is in place.",
    MODELS[1]: "**{v}** is complete -- {text}; the receipt is below.",
}


def _reply(
    ep: Episode, turn: Turn, verdict: Verdict | None, done_wo: dict[str, str], model: str
) -> str:
    v, label = turn.step, (verdict.label if verdict is not None else None)
    if v is None or label is None:
        return f"Thanks for the update -- noted ({model}). Let me know what you need next."
    s = ep.step(v)
    if label in ("eligible", "redo"):
        opener = OPENERS[model].format(v=v, text=s.text)
        return f"{opener}\n\nref {s.code}/{turn.work_order}\n\nAnything else?"
    if label == "done":
        return (
            f"Step {v} ({s.text}) was completed earlier under ref {s.code}/{done_wo[v]}; "
            "I have not booked it again."
        )
    if label == "blocked":
        assert verdict is not None
        return f"I can't do {v} yet: it still needs {', '.join(verdict.missing)}."
    return f"Step {v} was cancelled in the revision, so I will not perform it."


def _inject(ep: Episode, turn: Turn, label: str | None, how: str, reply: str) -> tuple[str, bool]:
    """(reply, refused) for an injected behaviour on a trap turn."""
    v = turn.step
    if v is None or label not in ("done", "cancelled"):
        return reply, False
    line = f"ref {ep.step(v).code}/{turn.work_order}"
    if how == "re_execute":
        return f"Done again as asked.\n{line}", False
    if how == "cite":
        return f"Step {v} is already done, no new booking needed.\n{line}", False
    if how == "refuse_silent":
        return f"Done.\n{line}", True
    return f"{v} is {label}; I decline to book it.\n{line}", True  # refuse, with language


def _play(ep: Episode, key: CellKey, how: str | None) -> tuple[TurnRecord, ...]:
    user = ScriptedUser(ep)
    done_wo: dict[str, str] = {}
    addition = f"\n\n[{key.arm}] state: " + " ".join(f"{s.id}:TODO" for s in ep.steps)
    turns = []
    injected = False
    while (turn := user.next_turn()) is not None:
        verdict = user.begin(turn)
        label = verdict.label if verdict is not None else None
        reply = _reply(ep, turn, verdict, done_wo, key.model)
        refused = False
        if how is not None and not injected and label in ("done", "cancelled"):
            reply, refused = _inject(ep, turn, label, how, reply)
            injected = True
        if key.arm == "ledger":  # the self-ledger arm ends every reply with its ledger
            word = {"done": "DONE", "cancelled": "CANCELLED"}
            ledger = (
                f"LEDGER {ep.step(v).code} {word.get(user.state.status(v), 'TODO')}"
                for v in user.state.steps
            )
            reply += "\n" + "\n".join(ledger)
        bookings = read_execution(reply, ep, turn.work_order).bookings
        admitted = () if refused else bookings
        steps = [b.step for b in admitted if b.step is not None]
        user.finish(turn, verdict, steps)
        for b in admitted:
            if b.step is not None and turn.work_order is not None:
                done_wo.setdefault(b.step, turn.work_order)
        turns.append(
            TurnRecord(
                index=turn.index, kind=turn.kind, step=turn.step, work_order=turn.work_order,
                user_text=turn.text, sent_text=turn.text + addition, arm_text=addition,
                reply=reply, admitted=admitted, refused=bookings if refused else (),
                named=turn.named, dynamic=turn.dynamic,
                calls=(CallRecord(role="agent", prompt_tokens=900 + 40 * turn.index,
                                  completion_tokens=len(reply) // 4, server_s=0.4),),
            )
        )  # fmt: skip
    return tuple(turns)


def _behaviour(arm: str, rng: random.Random) -> str | None:
    x = rng.random()
    for how, p in ERRORS[arm].items():
        if x < p:
            return how
        x -= p
    return None


def build_log(run_dir: Path, seeds: int) -> int:
    """Write the synthetic grid's records under *run_dir*; the number written."""
    n = 0
    with LogWriter(run_dir) as writer:
        for steps, density in GRAPHS:
            for seed in range(seeds):
                spec = EpisodeSpec(seed=seed, steps=steps, density=density)
                ep = generate(spec)
                for model in MODELS:
                    for arm in ARMS:
                        key = CellKey(model=model, steps=steps, density=density, arm=arm)
                        how = _behaviour(arm, random.Random(f"{model}|{arm}|{spec}"))
                        turns = _play(ep, key, how)
                        writer.write(
                            EpisodeRecord(cell=key, spec=spec, turns=turns, synthetic=True)
                        )
                        n += 1
    return n


def _timed(run_dir: Path, jobs: int) -> float:
    """Seconds ``rescore_dir`` takes (read + score) with ``jobs`` processes."""
    t0 = time.perf_counter()
    rescore_dir(run_dir, LogReport(), jobs=jobs, min_bytes=0)
    return time.perf_counter() - t0


def run(quick: bool = False) -> dict[str, Any]:
    """Build the log, time read + rescore; print one table line and one JSON line."""
    seeds = QUICK_SEEDS if quick else SEEDS
    with tempfile.TemporaryDirectory(prefix="ladder-bench-rescore-") as d:
        run_dir = Path(d)
        written = build_log(run_dir, seeds)
        size_mb = sum(p.stat().st_size for p in run_dir.rglob("*.jsonl")) / 1e6
        t0, c0 = time.perf_counter(), time.process_time()
        report = LogReport()
        with paused_gc():  # as ``ladder score`` reads
            records = read_logs(run_dir, report)
        t1 = time.perf_counter()
        lines = rescore(records.values())
        t2, c2 = time.perf_counter(), time.process_time()
        # ``ladder score``'s path: one core, then every core (runner.rescore).
        one_s, every_s, jobs = _timed(run_dir, 1), _timed(run_dir, 0), cores()
    cells = [x for x in lines if isinstance(x, CellLine)]
    result = {
        "case": "rescore",
        "episodes": len(records),
        "written": written,
        "log_mb": round(size_mb, 1),
        "cells": len(cells),
        "contrasts": sum(isinstance(x, ContrastLine) for x in lines),
        "read_s": round(t1 - t0, 3),
        "score_s": round(t2 - t1, 3),
        "total_s": round(t2 - t0, 3),
        "cpu_s": round(c2 - c0, 3),  # this process's CPU time: wall minus what others took
        "episodes_per_s": round(len(records) / (t2 - t0), 1),
        "target_s_per_10k": TARGET_S,
        "one_core_episodes_per_s": round(len(records) / one_s, 1),
        "all_cores_episodes_per_s": round(len(records) / every_s, 1),
        "cores": jobs,
        "holds": (t2 - t0) * 10_000 / max(1, len(records)) < TARGET_S,
    }
    print(
        f"{'case':<8} {'episodes':>8} {'log MB':>7} {'read s':>7} {'score s':>8} {'total s':>8}"
        f" {'cpu s':>6} {'episodes/s':>11}  target: 10,000 in < {TARGET_S:g} s"
    )
    print(
        f"{'rescore':<8} {result['episodes']:>8} {result['log_mb']:>7} {result['read_s']:>7}"
        f" {result['score_s']:>8} {result['total_s']:>8} {result['cpu_s']:>6}"
        f" {result['episodes_per_s']:>11}"
        f"  {'holds' if result['holds'] else 'MISSED'}"
    )
    print(
        f"ladder score path: {result['one_core_episodes_per_s']} episodes/s on one core, "
        f"{result['all_cores_episodes_per_s']} on all {jobs} cores"
    )
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    run(quick="--quick" in sys.argv[1:])
