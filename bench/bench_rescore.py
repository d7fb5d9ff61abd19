"""Offline rescoring throughput: read a grid's logs and rescore every episode, no model.

Builds a synthetic log of 14,040 episode records (a grid of 2 models x 5 graph
configurations x 6 arms x 234 seeds, the paper grid's size; ``quick``: 8 seeds;
:mod:`bench.rescore_log` writes it) to a temporary directory once per bench process
(:func:`shared_log`: the viewer's case reads the same one; #50, one build instead of three).

Timed (``quick``: once): ``read_logs`` + ``scoring.results.offline.rescore`` once; then, in
four ABBA rounds (bare here, bare fresh, one, every; then every, one, bare fresh, bare here;
#50), a bare schema-less ``msgspec.json.decode`` of every line of the same files (the floor,
and the machine's calibration; in this process, and in a fresh one), ``ladder score``'s path
(``runner.rundir.rescore.rescore_dir``) on one core and on every core this process may use
(the row names how many), each in a fresh process as the command runs it (:func:`_timed`).
The targets are ratios, each the median of the rounds' own ratios (a round's pair shares
that round's machine), their range in the row and the JSON (#50): one core within 2x the
bare decode (CPU seconds, both in fresh processes; the old wall figure, the bare decode in
the bench's process, is an info row: bench/README.md, "the rescore bench's spread"), every
core within 0.6 of one core; one core over the bare decode in user CPU seconds as info (the
kernel's part left out: the bare decode's page faults move with the machine's memory, #50,
eleventh round). The same one-core ratio on a log of the current generator version's
episodes (what a run writes now; the targeted row keeps the version-1 log every round
read), two ABBA rounds, as info. Then ``ladder score``, ``ladder report`` (no figures, the
default) and ``ladder report --figures`` run in fresh processes over the same directory,
four ABBA rounds (score, report, figures; figures, report, score; twice; not under
``quick``): report / score within 1.2x, the median of the four rounds' ratios; report
--figures / score as info (#50, ninth round: the figures are drawn on request only).
"""

from __future__ import annotations

import atexit
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from bench._common import abba, paired, ratios_of, row
from bench.rescore_log import build_log
from protocol.episode.versions import GENERATOR_VERSION
from runner.rundir.logs import LogReport, log_files, read_logs
from runner.rundir.rescore import cores, rescore_dir
from scoring.gc_pause import paused_gc
from scoring.results.lines import CellLine, ContrastLine
from scoring.results.offline import rescore

__all__ = ["build_log", "run", "shared_log"]

QUICK_SEEDS = 8
GRID_SEEDS = 234  # 2 x 5 x 6 x 234 = 14,040 records: the paper's grid of 14,000 episode-arms
# Targets as ratios measured in the same run (#50): rescoring within 2x a bare msgspec decode
# of the same files on one core; two cores within 0.6 of one core's time; ``ladder report``
# within 1.2x ``ladder score`` on the same directory. (Before #50: 5.5x and 3.3x the decode.)
ONE_CORE_X_BARE = 2.0
CORES_X_ONE = 0.6
REPORT_X_SCORE = 1.2
# ``ladder score`` / ``ladder report`` / ``ladder report --figures`` rounds, alternating (ABBA):
# about 35 s on the quiet machine, within the bench's 15 minutes
REPORT_ROUNDS = 4

_SHARED: dict[tuple[int, int], Path] = {}


def shared_log(seeds: int, generator: int = 1) -> Path:
    """A run directory of :func:`build_log`'s grid at ``seeds``, built once per bench
    process and shared by the cases that read it (the rescoring case's timings and its
    ``ladder score`` / ``ladder report`` runs, the viewer's case): building 14,040 episodes
    costs as much CPU as a case (#50). Removed when the process exits. ``generator``:
    :func:`build_log`'s."""
    if (seeds, generator) not in _SHARED:
        d = Path(tempfile.mkdtemp(prefix=f"ladder-bench-log{seeds}-g{generator}-"))
        atexit.register(shutil.rmtree, d, ignore_errors=True)
        build_log(d, seeds, jobs=cores(), generator=generator)  # on every core (#50)
        _SHARED[seeds, generator] = d
    return _SHARED[seeds, generator]


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


def _bare_timed(run_dir: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, user CPU s) of :func:`bare_decode_s`."""
    c0, u0 = _cpu_user()
    wall = bare_decode_s(run_dir)
    c1, u1 = _cpu_user()
    return wall, c1 - c0, u1 - u0


# ``ladder score``'s path timed in a fresh interpreter (:func:`_in_process` there), its
# imports done before the clock
_FRESH = (
    "import json, sys; from pathlib import Path; from bench.bench_rescore import _in_process; "
    "print(json.dumps(_in_process(Path(sys.argv[1]), int(sys.argv[2]))))"
)
# the bare decode timed the same way, so the targeted ratio's two measures run alike
# (bench/README.md, "the rescore bench's spread")
_BARE = (
    "import json, sys; from pathlib import Path; from bench.bench_rescore import _bare_timed; "
    "print(json.dumps(_bare_timed(Path(sys.argv[1]))))"
)


def _fresh(code: str, *argv: str) -> tuple[float, float, float]:
    """(wall s, CPU s, user CPU s) that *code* prints, run in a fresh interpreter."""
    cmd = [sys.executable, "-c", code, *argv]
    root = Path(__file__).resolve().parents[1]  # where ``bench`` imports from
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=root)
    wall, cpu, user = json.loads(done.stdout.splitlines()[-1])
    return float(wall), float(cpu), float(user)


def _timed(run_dir: Path, jobs: int) -> tuple[float, float, float]:
    """:func:`_in_process` in a fresh process, as ``ladder score`` runs (#50: in the bench's
    own process the one-core path ran warm, its memory already faulted in, while the workers
    of every core started cold; bench/README.md, "Fifth round: two cores' overhead")."""
    return _fresh(_FRESH, str(run_dir), str(jobs))


def _bare_fresh(run_dir: Path) -> tuple[float, float, float]:
    """:func:`_bare_timed` in a fresh process (the targeted ratio's denominator)."""
    return _fresh(_BARE, str(run_dir))


def _in_process(run_dir: Path, jobs: int) -> tuple[float, float, float]:
    """(wall s, CPU s and user CPU s of this process and its workers) of ``rescore_dir``
    with ``jobs``."""
    c0, u0 = _cpu_user()
    t0 = time.perf_counter()
    rescore_dir(run_dir, LogReport(), jobs=jobs, min_bytes=0)
    wall = time.perf_counter() - t0
    c1, u1 = _cpu_user()
    return wall, c1 - c0, u1 - u0


def _cpu_user() -> tuple[float, float]:
    """CPU s and user CPU s of this process and its children so far, from one reading: CPU
    less its kernel part (#50, eleventh round: the bare decode's page faults, a tenth to a
    fifth of its CPU, move with the machine's memory)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    user = own.ru_utime + kids.ru_utime
    return user + own.ru_stime + kids.ru_stime, user


def _cli_s(*argv: str) -> float:
    """Seconds one ``ladder`` command takes in a fresh process (start-up included)."""
    cmd = [sys.executable, "-c", "from ladder.app import main; main()", *argv]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _rounds(run_dir: Path, jobs: int, repeats: int) -> dict[str, Any]:
    """The bare decode (in this process, and in a fresh one), one core and every core in
    ABBA rounds (#50; the fresh decode next to one core, one core next to every core): each
    round's ratios share that round's machine, and a ratio's figure
    is the median of the rounds' (:func:`bench._common.paired`), their range kept. One core
    over the bare decode is read in CPU seconds, both in fresh processes (the one-core path
    is CPU-bound; wall adds the run queue's wait on a loaded machine); the old figure (wall,
    the bare decode in this process) is kept as info. Every core over one core stays wall."""
    measures = [partial(_bare_timed, run_dir), partial(_bare_fresh, run_dir)]
    rounds = abba([*measures, partial(_timed, run_dir, 1), partial(_timed, run_dir, jobs)], repeats)
    wall, cpu, user = 0, 1, 2
    ratios = {
        "one_core_x_bare": ratios_of(rounds, 2, 1, cpu),  # the target's, CPU s
        "one_core_x_bare_user": ratios_of(rounds, 2, 1, user),  # info: no kernel time
        "one_core_x_bare_wall": ratios_of(rounds, 2, 0, wall),  # before ruler71's
        "all_cores_x_one": ratios_of(rounds, 3, 2, wall),
        "all_cores_x_bare": ratios_of(rounds, 3, 0, wall),
    }
    names = ("bare_decode", "bare_fresh", "one_core", "all_cores")
    out: dict[str, Any] = {
        "bare_decode_s": sorted(round(r[0][0], 3) for r in rounds),
        "bare_decode_cpu_s": sorted(round(r[0][1], 3) for r in rounds),
        "bare_fresh_s": sorted(round(r[1][0], 3) for r in rounds),
        "bare_fresh_cpu_s": sorted(round(r[1][1], 3) for r in rounds),
        "bare_fresh_kernel_s": sorted(round(r[1][1] - r[1][2], 3) for r in rounds),
        "one_core_kernel_s": sorted(round(r[2][1] - r[2][2], 3) for r in rounds),
        "one_core_s": sorted(round(r[2][0], 3) for r in rounds),
        "one_core_cpu_s": sorted(round(r[2][1], 3) for r in rounds),
        "all_cores_s": sorted(round(r[3][0], 3) for r in rounds),
        "all_cores_cpu_s": sorted(round(r[3][1], 3) for r in rounds),
        # each round's (wall s, CPU s, user CPU s) of each measure, in the order they ran
        "rounds_raw": [
            {n: [round(x, 3) for x in m] for n, m in zip(names, r, strict=True)} for r in rounds
        ],
    }
    for name, xs in ratios.items():
        mid, lo, hi = paired(xs)
        out[name] = round(mid, 2)  # the median of the rounds' ratios
        out[f"{name}_rounds"] = [round(x, 3) for x in xs]  # in the order the rounds ran
        out[f"{name}_range"] = f"{lo:.2f}-{hi:.2f}"
    return out


# ABBA rounds of the fresh bare decode and one core on a log of the episodes a run writes now
# (#50, eleventh round: an info row; the targeted row keeps the version-1 log every round read)
NOW_ROUNDS = 2


def _now_rounds(seeds: int) -> dict[str, Any]:
    """One core over the fresh bare decode (CPU s) on :func:`build_log`'s grid of the current
    generator version's episodes, the median of :data:`NOW_ROUNDS` ABBA rounds' ratios."""
    run_dir = shared_log(seeds, GENERATOR_VERSION)
    rounds = abba([partial(_bare_fresh, run_dir), partial(_timed, run_dir, 1)], NOW_ROUNDS)
    mid, lo, hi = paired(ratios_of(rounds, 1, 0, 1))
    return {
        "now_generator": GENERATOR_VERSION,
        "now_one_core_x_bare": round(mid, 2),
        "now_one_core_x_bare_range": f"{lo:.2f}-{hi:.2f}",
        "now_one_core_cpu_s": sorted(round(r[1][1], 3) for r in rounds),
        "now_bare_fresh_cpu_s": sorted(round(r[0][1], 3) for r in rounds),
    }


def run(quick: bool = False) -> dict[str, Any]:
    """Build the log, time a bare decode, the serial rescore and ``ladder score``'s path on
    one core and on every core (ABBA rounds, :func:`_rounds`); then ``ladder score`` and
    ``ladder report`` over a 14,040-episode directory. Rows and one JSON line."""
    seeds = QUICK_SEEDS if quick else GRID_SEEDS
    repeats = 1 if quick else 4  # ABBA rounds of the bare decode, one core and every core
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
    n = len(records)
    del records  # once: the ladder score path in the rounds is the repeated figure
    timed = _rounds(run_dir, jobs, repeats)
    now = _now_rounds(seeds) if not quick else {}
    result: dict[str, Any] = {
        "case": "rescore",
        "episodes": n,
        "written": written,
        "log_mb": round(size_mb, 1),
        "cells": sum(isinstance(x, CellLine) for x in lines),
        "contrasts": sum(isinstance(x, ContrastLine) for x in lines),
        "read_s": round(t1 - t0, 3),
        "score_s": round(t2 - t1, 3),
        "total_s": round(t2 - t0, 3),
        "serial_s": [round(t2 - t0, 3)],
        "episodes_per_s": round(n / (t2 - t0), 1),
        "one_core_episodes_per_s": round(n / timed["one_core_s"][0], 1),
        "all_cores_episodes_per_s": round(n / timed["all_cores_s"][0], 1),
        "cores": jobs,
        **timed,
        **now,
        "grid_dir": _grid_dir(quick) if not quick else {"rows": [], "skipped": "quick"},
    }
    result["rows"] = _rows(result, repeats, quick)
    print(
        f"rescore: {n} episodes ({size_mb:.0f} MB); bare decode {timed['bare_decode_s'][0]:.2f}"
        f" s; ladder score path {timed['one_core_s'][0]:.2f} s on 1 core "
        f"(x{result['one_core_x_bare']} bare, {result['one_core_episodes_per_s']:.0f}/s), "
        f"{timed['all_cores_s'][0]:.2f} s on {jobs} cores (x{result['all_cores_x_bare']} bare, "
        f"x{result['all_cores_x_one']} one core, {result['all_cores_episodes_per_s']:.0f}/s)"
    )
    print(json.dumps(result))
    return result


def _rows(r: dict[str, Any], repeats: int, quick: bool) -> list[dict[str, Any]]:
    """The case's rows from :func:`run`'s result *r* (times: the best of the rounds; ratios:
    the median of the rounds' own, their range in the figure)."""
    per_10k, jobs, one_x, every_x = (
        10_000 / max(1, r["episodes"]),
        r["cores"],
        r["one_core_x_bare"],
        r["all_cores_x_one"],
    )
    targeted = jobs >= 2 and not quick
    return [
        row(f"bare msgspec decode of the same files, s per 10,000 ({r['log_mb']:.0f} MB)",
            round(r["bare_decode_s"][0] * per_10k, 3), "info", None),
        row("ladder score path, 1 core: s per 10,000 episodes",
            round(r["one_core_s"][0] * per_10k, 3), "info", None,
            episodes_per_s=r["one_core_episodes_per_s"]),
        row(f"  1 core / bare decode, CPU s, fresh processes (median of {repeats} ABBA "
            f"rounds, {r['one_core_x_bare_range']})", one_x,
            f"<= {ONE_CORE_X_BARE}" if not quick else "info",
            one_x <= ONE_CORE_X_BARE if not quick else None),
        row(f"  1 core / bare decode, user CPU s (kernel s left out: bare "
            f"{_span(r['bare_fresh_kernel_s'])}, 1 core {_span(r['one_core_kernel_s'])}; "
            f"median of {repeats}, {r['one_core_x_bare_user_range']})",
            r["one_core_x_bare_user"], "info", None),
        row(f"  1 core / bare decode in the bench's process, wall (the old figure; median of "
            f"{repeats}, {r['one_core_x_bare_wall_range']})", r["one_core_x_bare_wall"],
            "info", None),
        *([] if quick else [row(
            f"  1 core / bare decode, CPU s, on a log of generator {r['now_generator']}'s "
            f"episodes (what a run writes now; median of {NOW_ROUNDS} ABBA rounds, "
            f"{r['now_one_core_x_bare_range']})", r["now_one_core_x_bare"], "info", None)]),
        row(f"ladder score path, {jobs} cores: s per 10,000 episodes",
            round(r["all_cores_s"][0] * per_10k, 3), "info", None,
            episodes_per_s=r["all_cores_episodes_per_s"]),
        row(f"  {jobs} cores / bare decode (median of {repeats} ABBA rounds)",
            r["all_cores_x_bare"], "info", None),
        row(f"  {jobs} cores / 1 core (median of {repeats} ABBA rounds, "
            f"{r['all_cores_x_one_range']})", every_x,
            f"<= {CORES_X_ONE}" if targeted else "info", every_x <= CORES_X_ONE if targeted else None),
        *r["grid_dir"]["rows"],
    ]  # fmt: skip


def _span(xs: list[float]) -> str:
    """``lo-hi`` of sorted figures (one figure: itself)."""
    return f"{xs[0]:.2f}" if xs[0] == xs[-1] else f"{xs[0]:.2f}-{xs[-1]:.2f}"


def _grid_dir(quick: bool) -> dict[str, Any]:
    """``ladder score``, ``ladder report`` (no figures, the default) and ``ladder report
    --figures`` (fresh processes, every core) over a directory of 14,040 episodes (234
    seeds; ``quick``: 10 seeds): four ABBA rounds (score, report, figures; figures, report,
    score; #50, eighth round: one round's ratio swung 1.31-1.43 between two quiet draws),
    each figure the median of the rounds' ratios to that round's score, their range kept."""
    seeds = 10 if quick else GRID_SEEDS
    # the rescoring case's log when it ran first (shared_log)
    run_dir = shared_log(seeds)
    n = sum(1 for p in log_files(run_dir) for _ in p.open("rb"))
    bare = bare_decode_s(run_dir)
    score = partial(_cli_s, "score", str(run_dir))
    report = partial(_cli_s, "report", str(run_dir), "--out", str(run_dir / "report.md"))
    drawn = run_dir / "figures" / "report.md"  # its PNGs apart from the default's report
    figures = partial(_cli_s, "report", str(run_dir), "--out", str(drawn), "--figures")
    rounds = abba([score, report, figures], REPORT_ROUNDS)  # S R F, F R S, S R F, F R S
    ratios = [r / s for s, r, _ in rounds]
    x_score, lo, hi = paired(ratios)
    f_ratios = [f / s for s, _, f in rounds]
    f_score, f_lo, f_hi = paired(f_ratios)
    scores, reports, drawns = ([r[i] for r in rounds] for i in range(3))
    score_s, report_s, figures_s = min(scores), min(reports), min(drawns)
    return {
        "episodes": n,
        "bare_decode_s": round(bare, 3),
        "score_s": round(score_s, 3),
        "report_s": round(report_s, 3),  # the default: no figures (#50, ninth round)
        "report_x_score": round(x_score, 3),  # the median of the rounds' ratios
        "report_x_score_rounds": [round(x, 3) for x in ratios],  # in the order they ran
        "report_x_score_range": f"{lo:.3f}-{hi:.3f}",
        "scores_s": [round(x, 3) for x in scores],
        "reports_s": [round(x, 3) for x in reports],
        "report_figures_s": round(figures_s, 3),  # ``ladder report --figures``
        "report_figures_x_score": round(f_score, 3),
        "report_figures_x_score_rounds": [round(x, 3) for x in f_ratios],
        "report_figures_x_score_range": f"{f_lo:.3f}-{f_hi:.3f}",
        "reports_figures_s": [round(x, 3) for x in drawns],
        "rows": [
            row(f"ladder score, {n} episodes (fresh process, every core): s", round(score_s, 2),
                "info", None, x_bare=round(score_s / bare, 2)),
            row(f"ladder report, {n} episodes (no figures, the default; fresh process, every "
                "core): s", round(report_s, 2), "info", None, x_bare=round(report_s / bare, 2)),
            row(f"ladder report --figures, {n} episodes (fresh process, every core): s",
                round(figures_s, 2), "info", None, x_bare=round(figures_s / bare, 2)),
            row(f"  ladder report / ladder score (no figures, the default; same directory, "
                f"median of {len(ratios)} ABBA rounds, {lo:.3f}-{hi:.3f})", round(x_score, 3),
                f"<= {REPORT_X_SCORE}", x_score <= REPORT_X_SCORE),
            row(f"  ladder report --figures / ladder score (the same rounds, "
                f"{f_lo:.3f}-{f_hi:.3f})", round(f_score, 3), "info", None),
        ],
    }  # fmt: skip


if __name__ == "__main__":
    run(quick="--quick" in sys.argv[1:])
