"""Every problem a grid can have before a request is sent (:func:`check_grid`): counts under
their ceilings, arms, knobs, models, endpoints, decoding, the episodes it would generate and
the API keys it needs, each said in one line."""

from __future__ import annotations

import difflib
import importlib.util
import os
from collections import Counter
from pathlib import Path

from protocol.arms.table import ARMS, arm_names, arm_spec, memory_arms
from protocol.domains.known import POOLS
from protocol.episode.versions import (
    GENERATOR_VERSIONS,
    MAX_STEPS,
    MIN_STEPS,
    SpecError,
    check_spec,
)
from protocol.knobs import generator_problems, knob_problems
from protocol.records import CellKey, EpisodeSpec
from runner.grid.ceilings import value_problems
from runner.grid.cells import Grid
from runner.grid.doses import dose_collisions
from runner.grid.errors import GridError
from runner.grid.extras import missing
from runner.grid.paraphrase_cache import ParaphraseCacheError, load_paraphrases
from runner.grid.schema import EMBEDDED, url_problem
from runner.grid.seeds import count_seeds
from runner.plugins import load_plugins

__all__ = [
    "LANGGRAPH_MISSING",
    "MAX_EPISODES",
    "MAX_LISTED",
    "MAX_TRIALS",
    "check_grid",
    "key_problem",
    "missing_keys",
    "slug_collisions",
]

# OURS (#47): a run lists its tasks in memory (2M tasks took 1 GB); the largest shipped grid
# runs 10,240 episodes
MAX_EPISODES = 250_000
MAX_LISTED = 1_000  # OURS: arms and variants, models, endpoints of one grid (the paper: 12 arms)
MAX_TRIALS = 1_000  # OURS: trials per seed (a hostile grid's count is bounded; docs/trials.md)


def _listed_twice(kind: str, names: list[str]) -> list[str]:
    """One line per name listed more than once (linear in the list)."""
    return [
        f"{kind} {n!r} is listed {'twice' if k == 2 else f'{k} times'}"
        for n, k in Counter(names).items()
        if k > 1
    ]


def check_grid(grid: Grid, *, source: str = "grid", need_keys: bool = True) -> None:
    """Every problem a grid can have before a request is sent; raises one GridError
    (``need_keys=False``: an unset API-key variable is not one; :func:`missing_keys`)."""
    load_plugins()  # arms another package adds (entry points); ladder prints what it refused
    problems: list[str] = []
    run = grid.run
    listed = {"arms and variants": len(run.arms) + len(run.variants), "models": len(grid.models),
              "endpoints": len(grid.endpoints)}  # fmt: skip
    for what, n in listed.items():  # before any check that is linear in them times another
        if n > MAX_LISTED:
            raise GridError(f"{source}: {n:,} {what}; a grid may list at most {MAX_LISTED:,}")
    problems += value_problems(grid)  # numbers under their ceilings, no controls (#47)
    problems += _size_problems(grid) + _arm_problems(grid)
    problems += _memory_problems(grid) + _variant_problems(grid)
    if run.concurrency < 1:
        problems.append(f"concurrency must be at least 1 (got {run.concurrency})")
    if run.trials < 1:
        problems.append(f"trials must be at least 1 (got {run.trials})")
    elif run.trials > MAX_TRIALS:
        problems.append(f"trials must be at most {MAX_TRIALS} (got {run.trials})")
    # checked here, not when episodes start: such a grid would crash or silently run nothing
    problems += _run_problems(grid) + _decoding_problems(grid)
    problems += _model_problems(grid) + _endpoint_problems(grid)
    if not problems:
        problems += slug_collisions(grid) + _episode_problems(grid)
    if not problems:  # every episode of the grid is generated: after its size check
        problems += dose_collisions(grid.cells(), grid.seeds(), run.generator)
    if need_keys:
        problems += missing_keys(grid)
    if problems:  # one line per problem, said once however many variants share it
        raise GridError("\n".join(f"{source}: {p}" for p in dict.fromkeys(problems)))


def _size_problems(grid: Grid) -> list[str]:
    """An empty or unreadable seed range; graph sizes and densities out of range."""
    problems: list[str] = []
    try:
        if not grid.seeds():
            problems.append("the seed range is empty")
    except ValueError as e:
        problems.append(str(e))
    for s, d in grid.graphs():
        if not MIN_STEPS <= s <= MAX_STEPS:
            problems.append(f"steps must be between {MIN_STEPS} and {MAX_STEPS} (got {s})")
        if not 0.0 <= d <= 1.0:
            problems.append(f"density must be in [0, 1] (got {d})")
    return problems


def _arm_problems(grid: Grid) -> list[str]:
    """An arm listed twice, a broken plugin's arm, an unknown arm (with a did-you-mean)."""
    run = grid.run
    arms = arm_names()
    problems = _listed_twice("arm", run.arms)  # one log line each: a cell would run twice
    for a in dict.fromkeys([*run.arms, *(v.arm for v in run.variants)]):
        spec = arm_spec(a)
        if spec is None and a in ARMS.broken():  # a broken plugin the grid names (#47)
            problems.append(ARMS.broken()[a])
        elif spec is None:
            hint = difflib.get_close_matches(a, arms, n=1)
            problems.append(
                f"unknown arm {a!r}"  # the list only without a hint: 80 columns (#49)
                + (f" (did you mean {hint[0]!r}?)" if hint else f"; arms: {', '.join(arms)}")
            )
    return problems


def _variant_problems(grid: Grid) -> list[str]:
    """Each variant's knobs by their own checks (protocol.knobs), its harness's library, the
    generator its knobs need, its next model and the models it names."""
    problems: list[str] = []
    for v in grid.run.variants:  # each knob's own check (protocol.knobs)
        if arm_spec(v.arm) is not None:
            problems += knob_problems(v.knobs(), v.arm)
        if v.harness == "langgraph" and importlib.util.find_spec("langgraph") is None:
            problems.append(LANGGRAPH_MISSING)
        problems += generator_problems(v.knobs(), grid.run.generator)  # KnobSpec.since
        names = {m.name for m in grid.models}
        if v.next_model and v.next_model not in names:  # #48
            problems.append(f"next_model {v.next_model!r} is not a model of the grid")
        for name in v.models:  # the models that run the variant (#48)
            if name not in names:
                hint = difflib.get_close_matches(name, names, n=1)
                did = f" (did you mean {hint[0]!r}?)" if hint else ""
                problems.append(f"variant models: {name!r} is not a model of the grid{did}")
    return problems


def _model_problems(grid: Grid) -> list[str]:
    """No model, a model listed twice, and each model's endpoints, slots and compile model."""
    problems: list[str] = []
    if not grid.models:
        problems.append("no [[models]]: name at least one model")
    names = [m.name for m in grid.models]
    problems += _listed_twice("model", names)
    known = {e.name for e in grid.endpoints} | {EMBEDDED}
    for m in grid.models:
        if m.endpoint not in known:
            hint = difflib.get_close_matches(m.endpoint, known, n=1)
            problems.append(
                f"model {m.name!r} names unknown endpoint {m.endpoint!r}"
                + (f" (did you mean {hint[0]!r}?)" if hint else "")
            )
        if m.helper_endpoint is not None and m.helper_endpoint not in known:
            problems.append(
                f"model {m.name!r}: helper_endpoint {m.helper_endpoint!r} is not an endpoint"
            )
        for what, slot in (("agent_slot", m.agent_slot), ("helper_slot", m.helper_slot)):
            if slot is not None and slot < 0:
                problems.append(f"model {m.name!r}: {what} must be at least 0 (got {slot})")
        if m.compile_model is not None and m.compile_model not in names:
            problems.append(f"model {m.name!r}: compile_model {m.compile_model!r} is not a model")
    return problems


def _endpoint_problems(grid: Grid) -> list[str]:
    """Each endpoint's URLs and its in-flight and replica counts."""
    problems: list[str] = []
    for ep in grid.endpoints:
        if not ep.urls():
            problems.append(f"endpoint {ep.name!r} has no base_url")
        problems += [
            f"endpoint {ep.name!r}: {p}"
            for p in (url_problem(u, suggest=False) for u in ep.urls())
            if p
        ]
        if ep.max_in_flight < 1:
            problems.append(f"endpoint {ep.name!r}: max_in_flight must be at least 1")
        if ep.replica_slots < 0:
            problems.append(f"endpoint {ep.name!r}: replica_slots must be at least 0")
        if ep.start_in_flight is not None and ep.start_in_flight < 1:
            problems.append(f"endpoint {ep.name!r}: start_in_flight must be at least 1")
    return problems


def _episode_problems(grid: Grid) -> list[str]:
    """A grid's episodes (cells x seeds x trials), counted before any is listed, at most
    :data:`MAX_EPISODES`: a run lists its tasks in memory (#47)."""
    n = sum(1 for _ in grid.cells()) * count_seeds(grid.run.seeds) * grid.run.trials
    if n <= MAX_EPISODES:
        return []
    return [
        f"{n:,} episodes (cells x seeds x trials); a grid may run at most {MAX_EPISODES:,}: "
        "split it into grids over seed ranges, each with its own --out"
    ]


def slug_collisions(grid: Grid) -> list[str]:
    """One line per pair of distinct cells whose slugs coincide (``scripted/perfect`` and
    ``scripted_perfect``): they would share one log file and one would vanish from the
    results. Endpoints' names are checked the same way (unique)."""
    problems: list[str] = []
    seen: dict[str, CellKey] = {}
    for cell in grid.cells():
        slug = cell.slug()
        first = seen.setdefault(slug, cell)
        if first != cell:
            a, b = (
                (f"model {first.model!r}", f"model {cell.model!r}")
                if first.model != cell.model
                else (repr(first), repr(cell))
            )
            problems.append(f"{a} and {b} share the log file logs/{slug}.jsonl; rename one")
    names = [e.name for e in grid.endpoints]
    problems += [
        f"endpoint {n!r} is listed twice" for n in dict.fromkeys(names) if names.count(n) > 1
    ]
    return list(dict.fromkeys(problems))


def missing_keys(grid: Grid) -> list[str]:
    """One line per endpoint whose API-key environment variable is not set."""
    out: list[str] = []
    for ep in grid.endpoints:
        if not ep.api_key_env:
            continue
        key = os.environ.get(ep.api_key_env)
        if not key:
            out.append(f"endpoint {ep.name!r}: ${ep.api_key_env} (its API key) is not set")
        elif key_problem(key):
            out.append(
                f"endpoint {ep.name!r}: environment variable {ep.api_key_env} {key_problem(key)}"
            )
    return out


def key_problem(key: str) -> str | None:
    """Why an API key cannot go in an Authorization header (None when it can): a control
    character (a pasted newline) would split the header or crash the client."""
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in key):
        return "holds control characters (a pasted newline?); its API key cannot be sent"
    if not key.isascii():
        return "holds non-ASCII characters; its API key cannot be sent in a header"
    return None


def _memory_problems(grid: Grid) -> list[str]:
    """An arm without the libraries of its extra (``ArmSpec.needs``; one line naming the
    extra), a memory arm's bad k or window, an unknown embedding endpoint."""
    run = grid.run
    arms = dict.fromkeys([*run.arms, *(v.arm for v in run.variants)])
    memory = memory_arms()
    used = [a for a in arms if a in memory]
    absent = [m for a in arms if (m := missing(a)) is not None]  # ArmSpec.needs
    problems = ["; ".join(absent)] if absent else []  # one line for the one extra
    name = grid.memory.embed_endpoint
    if used and name is not None and name not in {e.name for e in grid.endpoints} | {EMBEDDED}:
        problems.append(f"[memory] embed_endpoint {name!r} is not an endpoint")
    return problems


LANGGRAPH_MISSING = "harness = 'langgraph' needs LangGraph: pip install 'state-ladder[tools]'"


def _run_problems(grid: Grid) -> list[str]:
    """A grid with no cells; tiers and rates the generator refuses (its own check)."""
    problems: list[str] = []
    run = grid.run
    for d in run.domains:
        if d not in POOLS:
            hint = difflib.get_close_matches(d, list(POOLS), n=1)
            did = f" (did you mean {hint[0]!r}?)" if hint else ""
            problems.append(
                f"[run] domains: unknown value {d!r}{did}; choose from {', '.join(POOLS)} "
                "or a pack file (./my_domain.toml)"
            )
    empty = [k for k in ("arms", "domains", "briefs") if not getattr(run, k)]
    if run.generator not in GENERATOR_VERSIONS:
        known = ", ".join(map(str, GENERATOR_VERSIONS))
        problems.append(f"unknown generator version {run.generator}; choose one of {known}")
    if run.schedules and run.generator < 3:
        problems.append("schedules need generator version 3 or later")
    if run.variants and "arms" in empty:  # variants alone are cells (the tool-harness grid)
        empty.remove("arms")
    if not grid.graphs():
        empty.append("graphs (steps x density)")
    if empty:
        problems.append(f"the grid has no cells: empty {', '.join(empty)}")
    specs = [
        EpisodeSpec(
            seed=0,
            steps=MIN_STEPS,
            density=0.0,
            paraphrase_tier=w.paraphrase_tier,
            ambiguous_rate=w.ambiguous_rate,
        )
        for w in run.wording_list()
    ]
    paraphrases = None
    if run.paraphrase_cache is not None:
        try:
            paraphrases = load_paraphrases(Path(run.paraphrase_cache), run.domains, run.generator)
        except ParaphraseCacheError as e:
            problems += str(e).splitlines()
            return problems
    for spec in specs:
        try:
            check_spec(spec, paraphrases)
        except SpecError as e:
            note = " ([run] paraphrase_cache)" if "cache" in str(e) else ""
            if str(e) + note not in problems:
                problems.append(str(e) + note)
    return problems


def _decoding_problems(grid: Grid) -> list[str]:
    """Attempts, timeout, backoff, and a positive budget for every regime a model uses."""
    problems: list[str] = []
    d = grid.decoding
    if d.attempts < 1:
        problems.append(f"decoding.attempts must be at least 1 (got {d.attempts})")
    if not d.timeout_s > 0:
        problems.append(f"decoding.timeout_s must be positive (got {d.timeout_s})")
    if not d.backoff_s >= 0:
        problems.append(f"decoding.backoff_s must be at least 0 (got {d.backoff_s})")
    if not d.temperature >= 0:
        problems.append(f"decoding.temperature must be at least 0 (got {d.temperature})")
    if d.top_p is not None and not 0 < d.top_p <= 1:
        problems.append(f"decoding.top_p must be in (0, 1] (got {d.top_p})")
    regimes = sorted({m.regime for m in grid.models})
    for name in ("reply_budget", "matcher_budget", "compiler_budget"):
        budgets: dict[str, int] = getattr(d, name)
        for regime in regimes:
            if regime not in budgets:
                problems.append(f"decoding.{name}: no entry for the {regime!r} regime")
            elif budgets[regime] < 1:
                problems.append(f"decoding.{name}[{regime!r}] must be at least 1")
    return problems
