"""A ceiling for every number of a grid, and no control character in any of its strings
(OURS, #47), checked at validation: a value past
one is one line naming the field, never a ``TypeError`` from a 64-bit encoder deep in a
run (``--max-tokens 99999999999999999999``) nor a reply cap of gigabytes
(``--max-tokens 20000000``).

Every integer anywhere in the grid (a model's ``extra`` included) must lie in the signed
64-bit range (what the manifest, the logs and a request body can hold); the fields named in
:data:`CEILINGS` have a tighter ceiling, far above any real grid. The walk is iterative and
linear in the grid. docs/security.md lists the ceilings.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from protocol.knobs import KNOBS, knob_spec
from protocol.visible import control_problems

__all__ = ["BOUNDED", "CEILINGS", "INT64", "MAX_BUDGET", "ceiling_of", "value_problems"]

INT64 = 2**63 - 1
# A token budget: a thinking model's longest real budget is some 32k tokens. The reply's
# byte cap is bounded on its own (runner.client.wire.reply_cap).
MAX_BUDGET = 131_072

# field path (list indices as [], a budget's regime as *) -> its ceiling
CEILINGS: dict[str, float] = {
    "run.concurrency": 65_536,  # episodes in flight
    "decoding.attempts": 100,
    "decoding.timeout_s": 86_400.0,  # a day per request
    "decoding.backoff_s": 3_600.0,
    "decoding.temperature": 100.0,
    "decoding.reply_budget.*": MAX_BUDGET,
    "decoding.matcher_budget.*": MAX_BUDGET,
    "decoding.compiler_budget.*": MAX_BUDGET,
    "endpoints[].max_in_flight": 65_536,
    "endpoints[].start_in_flight": 65_536,
    "endpoints[].replica_slots": 65_536,
    "models[].context": 100_000_000,
    "models[].agent_slot": 65_536,
    "models[].helper_slot": 65_536,
}
# The numbers of a grid whose own check is tighter than a ceiling (its line says the range):
# field path -> where. The walk leaves them to it, so a huge value is one line, not two; a
# variant's knobs (``run.variants[].FIELD``) are their KnobSpec's ceiling
# (protocol.knobs.knob_problems). A test holds every number of the grid to one of the three.
BOUNDED: dict[str, str] = {
    "run.steps[]": "steps between MIN_STEPS and MAX_STEPS (check_grid)",
    "run.density[]": "density in [0, 1] (check_grid)",
    "run.graphs[].steps": "steps between MIN_STEPS and MAX_STEPS (check_grid)",
    "run.graphs[].density": "density in [0, 1] (check_grid)",
    "run.trials": "trials at most MAX_TRIALS (check_grid)",
    "run.paraphrase_tier": "a tier the generator knows (check_spec)",
    "run.ambiguous_rate": "a rate in [0, 1] (check_spec)",
    "run.wordings[].paraphrase_tier": "a tier the generator knows (check_spec)",
    "run.wordings[].ambiguous_rate": "a rate in [0, 1] (check_spec)",
    "run.generator": "a known generator version (_run_problems)",
    "decoding.top_p": "top_p in (0, 1] (_decoding_problems)",
}
_INDEX = re.compile(r"\[\d+\]")


def _pattern(path: str) -> str:
    """``models[3].context`` -> ``models[].context``; a budget's regime -> ``*``."""
    path = _INDEX.sub("[]", path)
    head = path.rpartition(".")[0]
    return f"{head}.*" if head.endswith("_budget") else path


def ceiling_of(pattern: str) -> float | str | None:
    """The ceiling of a grid number's field pattern (``models[].context``): a number from
    :data:`CEILINGS` or a variant's knob, the check that bounds it (:data:`BOUNDED`), or None
    (only the 64-bit range)."""
    if pattern in CEILINGS:
        return CEILINGS[pattern]
    if pattern in BOUNDED:
        return BOUNDED[pattern]
    head, _, field = pattern.rpartition(".")
    if head == "run.variants[]" and field in KNOBS.names():
        return knob_spec(field).ceiling
    return None


def value_problems(grid: msgspec.Struct) -> list[str]:
    """One line per number of ``grid`` past its ceiling (or outside the 64-bit range; a
    budget's regimes holding one value, ``--max-tokens``, are one line) and per string
    holding a control character (a model's name becomes a log file's name and a report's
    row: C0, C1, bidi and zero-width characters are refused, named by their escape)."""
    data = msgspec.to_builtins(grid)
    problems = set(control_problems(data, newlines=False))  # a grid is names and paths
    todo: list[tuple[str, Any]] = [("", data)]
    while todo:
        path, node = todo.pop()
        if isinstance(node, dict):
            todo += [(f"{path}.{k}" if path else str(k), v) for k, v in node.items()]
        elif isinstance(node, list):
            todo += [(f"{path}[{i}]", v) for i, v in enumerate(node)]
        elif isinstance(node, int | float) and not isinstance(node, bool):
            pattern = _pattern(path)
            if pattern not in CEILINGS and ceiling_of(pattern) is not None:
                continue  # its own check's line (BOUNDED, a variant's knob)
            ceiling = CEILINGS.get(pattern, INT64)
            shown = pattern.removesuffix(".*") if pattern.endswith(".*") else path
            if node > ceiling or node != node:  # NaN too
                problems.add(f"{shown} must be at most {ceiling:,} (got {node})")
            elif node < -INT64 - 1:
                problems.add(f"{shown} is below the 64-bit range (got {node})")
    return sorted(problems)
