"""``python -m bench``: run every benchmark case, print one table, write one JSON line per case.

Usage::

    python -m bench                  # every case: its rows and JSON line as it finishes
    python -m bench --quick          # a short smoke run of every case
    python -m bench --json out.jsonl # JSON lines appended to a file (tables alone on stdout)
    python -m bench --only saturation,client_cpu

Each case is a module ``bench/bench_<case>.py`` with ``run(quick: bool = False) -> dict``;
the dict names its ``case`` and either ``rows`` (figure, value, target, holds) or a single
figure. Whatever a case prints itself goes to stderr. The moment a case finishes, its
machine-calibration line, its rows and its JSON line are printed (the JSON line appended to
``--json``); the CPU affinity a case set is restored before the next; the whole table comes
again at the end, with each case's duration (longest first). Exit status 1 if a case
crashed.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import platform
import sys
import time
import traceback
from typing import Any

import orjson

WHOLE_BENCH_S = 900  # `just bench` within 15 minutes on the 2-core machine (#50)
CASES = (
    "endpoint",
    "saturation",
    "client_cpu",
    "baselines",
    "memory",
    "helpers",
    "cost",
    "rescore",
    "turn_cost",
    "view",
    "prefix",
    "queue",
    "memory_arms",
    "harness",
    "helper_slot",
    "hostile",
    "startup",
)


def machine() -> dict[str, Any]:
    model = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    return {
        "nproc": os.cpu_count(),
        "cpu": model or platform.processor(),
        "python": platform.python_version(),
    }


def _rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The table lines of a case's result (its ``rows``, or one line made of its keys)."""
    if isinstance(result.get("rows"), list):
        return list(result["rows"])
    if "episodes_per_s" in result:  # bench_rescore's shape
        target_s = result.get("target_s_per_10k", 10.0)
        rows = [
            {
                "figure": f"episodes rescored/s ({result.get('episodes')} episodes, "
                f"{result.get('total_s')} s read + score)",
                "value": result["episodes_per_s"],
                "target": f">= {10_000 / target_s:g}",
                "holds": result.get("holds"),
            }
        ]
        for key, label in (
            ("one_core_episodes_per_s", "ladder score: episodes/s on one core"),
            (
                "all_cores_episodes_per_s",
                f"ladder score: episodes/s on {result.get('cores')} cores",
            ),
        ):
            if key in result:
                rows.append({"figure": label, "value": result[key], "target": "info"})
        return rows
    return [
        {
            "figure": result.get("figure", "result"),
            "value": result.get("value"),
            "target": result.get("target", "info"),
            "holds": result.get("holds"),
        }
    ]


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def print_table(results: list[dict[str, Any]], out: Any = sys.stdout) -> None:
    lines = [("case", "figure", "value", "target", "holds")]
    for r in results:
        for x in _rows(r):
            holds = x.get("holds")
            lines.append(
                (
                    r.get("case", "?"),
                    str(x.get("figure", "")),
                    _fmt(x.get("value")),
                    str(x.get("target", "")),
                    "-" if holds is None else "yes" if holds else "NO",
                )
            )
    widths = [max(len(ln[i]) for ln in lines) for i in range(5)]
    for i, ln in enumerate(lines):
        print(
            "  ".join(
                c.ljust(w) if j < 2 else c.rjust(w)
                for j, (c, w) in enumerate(zip(ln, widths, strict=True))
            ).rstrip(),
            file=out,
        )
        if i == 0:
            print("  ".join("-" * w for w in widths), file=out)


def calibrate() -> dict[str, float]:
    """One machine-calibration figure, measured beside each case: how fast this process runs
    a fixed pure-Python workload now (a loaded or slower machine reads lower), and the load
    average. The case's own figures are ratios measured in the same run, so they travel;
    this line says what the machine was doing while they were measured."""
    data = list(range(20_000))
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        sorted(data, key=lambda x: -x)
        sum(x * x for x in data)
        "".join(map(str, data[:5_000])).split("9")
        best = min(best, time.perf_counter() - t0)
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover
        load = float("nan")
    return {"python_ms": round(1000 * best, 2), "loadavg_1m": round(load, 2)}


def _affinity() -> set[int] | None:
    try:
        return os.sched_getaffinity(0)
    except AttributeError:  # pragma: no cover - not Linux
        return None


def run_case(name: str, quick: bool) -> dict[str, Any]:
    t0 = time.perf_counter()
    cores = _affinity()
    before = calibrate()
    try:
        module = importlib.import_module(f"bench.bench_{name}")
        with contextlib.redirect_stdout(sys.stderr):
            result = dict(module.run(quick=quick))
    except Exception as e:  # a crashed case is a table line, not the end of the run
        traceback.print_exc()
        result = {
            "case": name,
            "error": f"{type(e).__name__}: {e}",
            "rows": [
                {
                    "figure": f"crashed: {type(e).__name__}: {e}"[:100],
                    "value": None,
                    "target": "",
                    "holds": False,
                }
            ],
        }
    finally:
        if cores is not None:  # a case pins this process (bench._common.pin): undo it
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, cores)
    result.setdefault("case", name)
    result["bench_s"] = round(time.perf_counter() - t0, 1)
    result["quick"] = quick
    result["calibration"] = {"before": before, "after": calibrate()}
    return result


def _calibration_line(r: dict[str, Any]) -> str:
    c = r.get("calibration", {})
    b, a = c.get("before", {}), c.get("after", {})
    return (
        f"# {r.get('case')}: {r.get('bench_s')} s; machine calibration: pure-Python workload "
        f"{b.get('python_ms')} ms before, {a.get('python_ms')} ms after; load average "
        f"{b.get('loadavg_1m')} / {a.get('loadavg_1m')}"
    )


def durations(results: list[dict[str, Any]]) -> str:
    """One line: each case's seconds, longest first, and their sum (#50: where the time of
    a whole run goes, so the next cut starts from it)."""
    by = sorted(results, key=lambda r: -float(r.get("bench_s") or 0.0))
    total = sum(float(r.get("bench_s") or 0.0) for r in results)
    cases = ", ".join(f"{r.get('case')} {r.get('bench_s')}" for r in by)
    return f"# case durations (s), longest first: {cases}; sum {total:.1f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="a short smoke run of every case")
    p.add_argument("--json", metavar="FILE", help="append the JSON lines here, not to stdout")
    p.add_argument("--only", metavar="CASES", help=f"comma-separated subset of {','.join(CASES)}")
    args = p.parse_args(argv)
    names = [c.strip() for c in args.only.split(",")] if args.only else list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        p.error(f"unknown case(s) {', '.join(unknown)}; cases: {', '.join(CASES)}")
    info = machine()
    print(
        f"# {info['nproc']} x {info['cpu']}, Python {info['python']}"
        f"{' (quick)' if args.quick else ''}",
        flush=True,
    )
    results = []
    started = time.perf_counter()
    for name in names:
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        r = run_case(name, args.quick)
        r["machine"] = info
        results.append(r)
        print(f"bench: {name} done in {r['bench_s']} s", file=sys.stderr, flush=True)
        # This case's rows and JSON line now: a stopped run keeps every finished case.
        print(_calibration_line(r))
        print_table([r])
        line = orjson.dumps(r, default=str) + b"\n"
        if args.json:
            with open(args.json, "ab") as f:
                f.write(line)
        else:
            sys.stdout.flush()
            sys.stdout.buffer.write(line)
        sys.stdout.flush()
    if len(results) > 1:
        print("\n# every case")
        print_table(results)
        print(durations(results))
    if names == list(CASES) and not args.quick:  # `just bench` (#50): the whole run's time
        total = round(time.perf_counter() - started, 1)
        print(f"# whole bench: {total} s (target <= {WHOLE_BENCH_S} s: "
              f"{'yes' if total <= WHOLE_BENCH_S else 'NO'})")  # fmt: skip
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
