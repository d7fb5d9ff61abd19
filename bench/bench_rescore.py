"""Offline rescoring throughput: read a grid's logs and rescore every episode, no model.

Builds a synthetic log of 14,040 episode records (a grid of 2 models x 5 graph
configurations x 6 arms x 234 seeds, the paper grid's size; ``quick``: 8 seeds), written
through ``runner.rundir.logs.LogWriter`` to a temporary directory once per bench process
(:func:`shared_log`: the viewer's case reads the same one; #50, one build instead of three). Replies are written from perfect play with
injected errors: re-executions of redo probes, citations inside refusals, refused bookings
(enforce, hybrid) with and without refusal language, stale-work-order re-displays, prose
around every ref line, LEDGER lines closing every reply of the self-ledger arm; user
messages carry an arm addition and each turn one call record, so the lines are about the size
a real run writes.

Timed (``quick``: once): a bare schema-less ``msgspec.json.decode`` of every line of the
same files (the floor, and the machine's calibration) and ``ladder score``'s path
(``runner.rundir.rescore.rescore_dir``) on one core, in four interleaved rounds (ABBA: a
change of the shared machine's load falls on both; the ratio is the median of the rounds'
ratios, their range in the row and the JSON, #50); ``read_logs`` +
``scoring.results.offline.rescore`` once; the path on every core this process may use (the
row names how many), best of four. The targets are ratios measured in the same run (#50):
one core within 2x the bare decode, every core within 0.6 of one core. Then ``ladder score`` and
``ladder report`` run in fresh processes over the same directory, ABBA (score, report,
report, score; not under ``quick``): report / score within 1.2x.
"""

from __future__ import annotations

import atexit
import json
import multiprocessing
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import msgspec

from bench._common import median, row
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
from protocol.arms.table import arm_names
from protocol.state.bookings import read_execution
from runner.rundir.logs import LogReport, LogWriter, log_files, read_logs
from runner.rundir.rescore import cores, rescore_dir
from scoring.gc_pause import paused_gc
from scoring.results.lines import CellLine, ContrastLine
from scoring.results.offline import rescore

__all__ = ["run"]

MODELS = ("bench/model-a", "bench/model-b")
GRAPHS = ((5, 0.15), (10, 0.15), (15, 0.15), (18, 0.15), (15, 0.3))
QUICK_SEEDS = 8
GRID_SEEDS = 234  # 2 x 5 x 6 x 234 = 14,040 records: the paper's grid of 14,000 episode-arms
# Targets as ratios measured in the same run (#50): rescoring within 2x a bare msgspec decode
# of the same files on one core; two cores within 0.6 of one core's time; ``ladder report``
# within 1.2x ``ladder score`` on the same directory. (Before #50: 5.5x and 3.3x the decode.)
ONE_CORE_X_BARE = 2.0
CORES_X_ONE = 0.6
REPORT_X_SCORE = 1.2
# Probability that an episode of an arm carries each injected behaviour.
ERRORS = {
    "raw": {"re_execute": 0.5, "cite": 0.1},
    "checklist": {"re_execute": 0.35, "cite": 0.1},
    "ledger": {"re_execute": 0.25},
    "directive": {"re_execute": 0.1, "cite": 0.3},
    "enforce": {"refuse": 0.3, "refuse_silent": 0.3},
    "hybrid": {"refuse": 0.2},
}
ARMS = tuple(a for a in arm_names() if a in ERRORS)  # the six arms the synthetic log plays


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


def build_log(run_dir: Path, seeds: int, jobs: int = 1) -> int:
    """Write the synthetic grid's records under *run_dir*; the number written. With ``jobs``
    > 1 the (graph, model) parts are written by that many processes at once: each part is
    its own cells' files, written in the same order, so the files are the same bytes."""
    parts = [(steps, density, model) for steps, density in GRAPHS for model in MODELS]
    if jobs <= 1:
        return sum(_build_part(run_dir, seeds, *part) for part in parts)
    spawn = multiprocessing.get_context("spawn")  # no copy of the bench process's heap
    with ProcessPoolExecutor(max_workers=jobs, mp_context=spawn) as pool:
        futures = [pool.submit(_build_part, run_dir, seeds, *part) for part in parts]
        return sum(f.result() for f in futures)


def _build_part(run_dir: Path, seeds: int, steps: int, density: float, model: str) -> int:
    """One (graph, model) part of :func:`build_log`: its cells' records, seed by seed."""
    n = 0
    with LogWriter(run_dir) as writer:
        for seed in range(seeds):
            spec = EpisodeSpec(seed=seed, steps=steps, density=density)
            ep = generate(spec)
            for arm in ARMS:
                key = CellKey(model=model, steps=steps, density=density, arm=arm)
                how = _behaviour(arm, random.Random(f"{model}|{arm}|{spec}"))
                turns = _play(ep, key, how)
                writer.write(EpisodeRecord(cell=key, spec=spec, turns=turns, synthetic=True))
                n += 1
    return n


_SHARED: dict[int, Path] = {}


def shared_log(seeds: int) -> Path:
    """A run directory of :func:`build_log`'s grid at ``seeds``, built once per bench
    process and shared by the cases that read it (the rescoring case's timings and its
    ``ladder score`` / ``ladder report`` runs, the viewer's case): building 14,040 episodes
    costs as much CPU as a case (#50). Removed when the process exits."""
    if seeds not in _SHARED:
        d = Path(tempfile.mkdtemp(prefix=f"ladder-bench-log{seeds}-"))
        atexit.register(shutil.rmtree, d, ignore_errors=True)
        build_log(d, seeds, jobs=cores())  # set-up on every core (#50: -half its wall)
        _SHARED[seeds] = d
    return _SHARED[seeds]


def bare_decode_s(run_dir: Path) -> float:
    """Seconds to read every log file and decode each line with a bare, schema-less
    ``msgspec.json.decode``: the floor any rescoring of these files stands on, measured in
    the same run so the ratio to it travels between machines."""
    t0 = time.perf_counter()
    decode = msgspec.json.decode
    for path in sorted(run_dir.rglob("*.jsonl")):
        for line in path.read_bytes().split(b"\n"):
            if line:
                decode(line)
    return time.perf_counter() - t0


def _timed(run_dir: Path, jobs: int) -> tuple[float, float]:
    """(wall s, CPU s of this process and its workers) of ``rescore_dir`` with ``jobs``."""
    c0 = _cpu()
    t0 = time.perf_counter()
    rescore_dir(run_dir, LogReport(), jobs=jobs, min_bytes=0)
    return time.perf_counter() - t0, _cpu() - c0


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _cli_s(*argv: str) -> float:
    """Seconds one ``ladder`` command takes in a fresh process (start-up included)."""
    cmd = [sys.executable, "-c", "from ladder.app import main; main()", *argv]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def run(quick: bool = False) -> dict[str, Any]:
    """Build the log, time a bare decode, the serial rescore and ``ladder score``'s path on
    one core and on every core (best of repeats, the spread kept); then ``ladder score`` and
    ``ladder report`` over a 14,040-episode directory. Rows and one JSON line."""
    seeds = QUICK_SEEDS if quick else GRID_SEEDS
    repeats = 1 if quick else 4  # ABBA rounds of the bare decode and one core
    jobs = cores()
    # one shared log (shared_log): the timings, the CLI runs and the viewer's case
    run_dir = shared_log(seeds)
    written = sum(1 for p in log_files(run_dir) for _ in p.open("rb"))
    size_mb = sum(p.stat().st_size for p in run_dir.rglob("*.jsonl")) / 1e6
    t0 = time.perf_counter()
    report = LogReport()
    with paused_gc():  # as ``ladder score`` reads
        records = read_logs(run_dir, report)
    t1 = time.perf_counter()
    lines = rescore(records.values())
    t2 = time.perf_counter()
    # once: the ladder score path below is the repeated figure (its imports now done)
    serial = [t2 - t0]
    # the bare decode and one core's rescoring interleaved, ABBA (#50): a change in the
    # machine's load between them falls on both; the ratio is the median of the rounds'
    bare_one: list[tuple[float, tuple[float, float]]] = []
    for i in range(repeats):
        if i % 2 == 0:
            b_i = bare_decode_s(run_dir)
            bare_one.append((b_i, _timed(run_dir, 1)))
        else:
            o_i = _timed(run_dir, 1)
            bare_one.append((bare_decode_s(run_dir), o_i))
    bare = sorted(b for b, _ in bare_one)
    one_x_rounds = sorted(o[0] / b for b, o in bare_one)
    one = sorted((o for _, o in bare_one), key=lambda x: x[0])
    every = sorted((_timed(run_dir, jobs) for _ in range(repeats)), key=lambda x: x[0])
    grid_rows = _grid_dir(quick) if not quick else {"rows": [], "skipped": "quick"}
    n = len(records)
    b = bare[0]
    per_10k = 10_000 / max(1, n)
    cells = [x for x in lines if isinstance(x, CellLine)]
    one_s, every_s = one[0][0], every[0][0]
    one_x, every_x = round(median(one_x_rounds), 2), round(every_s / b, 2)
    result = {
        "case": "rescore",
        "episodes": n,
        "written": written,
        "log_mb": round(size_mb, 1),
        "cells": len(cells),
        "contrasts": sum(isinstance(x, ContrastLine) for x in lines),
        "bare_decode_s": [round(x, 3) for x in bare],
        "read_s": round(t1 - t0, 3),
        "score_s": round(t2 - t1, 3),
        "total_s": round(t2 - t0, 3),
        "serial_s": [round(x, 3) for x in sorted(serial)],
        "one_core_s": [round(x[0], 3) for x in one],
        "one_core_cpu_s": [round(x[1], 3) for x in one],
        "all_cores_s": [round(x[0], 3) for x in every],
        "all_cores_cpu_s": [round(x[1], 3) for x in every],
        "episodes_per_s": round(n / (t2 - t0), 1),
        "one_core_episodes_per_s": round(n / one_s, 1),
        "all_cores_episodes_per_s": round(n / every_s, 1),
        "cores": jobs,
        "one_core_x_bare": one_x,  # the median of the interleaved rounds' ratios
        "one_core_x_bare_rounds": [round(x, 3) for x in one_x_rounds],
        "all_cores_x_bare": every_x,
        "grid_dir": grid_rows,
    }
    result["rows"] = [
        row(f"bare msgspec decode of the same files, s per 10,000 ({size_mb:.0f} MB)",
            round(b * per_10k, 3), "info", None),
        row("ladder score path, 1 core: s per 10,000 episodes", round(one_s * per_10k, 3),
            "info", None, episodes_per_s=result["one_core_episodes_per_s"]),
        row(f"  1 core / bare decode (median of {repeats} interleaved rounds, "
            f"{one_x_rounds[0]:.2f}-{one_x_rounds[-1]:.2f})", one_x,
            f"<= {ONE_CORE_X_BARE}" if not quick else "info",
            one_x <= ONE_CORE_X_BARE if not quick else None),
        row(f"ladder score path, {jobs} cores: s per 10,000 episodes",
            round(every_s * per_10k, 3), "info", None,
            episodes_per_s=result["all_cores_episodes_per_s"]),
        row(f"  {jobs} cores / bare decode", every_x, "info", None),
        row(f"  {jobs} cores / 1 core", round(every_s / one_s, 2),
            f"<= {CORES_X_ONE}" if jobs >= 2 and not quick else "info",
            every_s / one_s <= CORES_X_ONE if jobs >= 2 and not quick else None),
        *grid_rows["rows"],
    ]  # fmt: skip
    print(
        f"rescore: {n} episodes ({size_mb:.0f} MB); bare decode {b:.2f} s; ladder score path "
        f"{one_s:.2f} s on 1 core (x{result['one_core_x_bare']} bare, "
        f"{result['one_core_episodes_per_s']:.0f}/s), {every_s:.2f} s on {jobs} cores "
        f"(x{result['all_cores_x_bare']} bare, {result['all_cores_episodes_per_s']:.0f}/s)"
    )
    print(json.dumps(result))
    return result


def _grid_dir(quick: bool) -> dict[str, Any]:
    """``ladder score`` and ``ladder report`` (fresh processes, every core) over a directory
    of 14,040 episodes (234 seeds; ``quick``: 10 seeds)."""
    seeds = 10 if quick else GRID_SEEDS
    # the rescoring case's log when it ran first (shared_log)
    run_dir = shared_log(seeds)
    n = sum(1 for p in log_files(run_dir) for _ in p.open("rb"))
    bare = bare_decode_s(run_dir)
    # ABBA: score, report, report, score; the ratio of the sums
    scores = [_cli_s("score", str(run_dir))]
    reports = [_cli_s("report", str(run_dir), "--out", str(run_dir / "report.md"))]
    reports.append(_cli_s("report", str(run_dir), "--out", str(run_dir / "report.md")))
    scores.append(_cli_s("score", str(run_dir)))
    x_score = round(sum(reports) / sum(scores), 3)
    score_s, report_s = min(scores), min(reports)
    return {
        "episodes": n,
        "bare_decode_s": round(bare, 3),
        "score_s": round(score_s, 3),
        "report_s": round(report_s, 3),
        "report_x_score": x_score,
        "rows": [
            row(f"ladder score, {n} episodes (fresh process, every core): s", round(score_s, 2),
                "info", None, x_bare=round(score_s / bare, 2)),
            row(f"ladder report, {n} episodes (fresh process, every core): s",
                round(report_s, 2), "info", None, x_bare=round(report_s / bare, 2)),
            row("  ladder report / ladder score (same directory, ABBA)", x_score,
                f"<= {REPORT_X_SCORE}", x_score <= REPORT_X_SCORE),
        ],
    }  # fmt: skip


if __name__ == "__main__":
    run(quick="--quick" in sys.argv[1:])
