"""Model names of the scripted endpoint: the name picks the policy, a query string its knobs.

Grammar::

    scripted/<policy>[?<param>=<number>[&<param>=<number>...]]

Policies (``GET /v1/models`` lists them):

* ``perfect``: the perfect agent (Appendix A.1); with the runner's lineage header it
  remembers its own earlier sessions of the episode (issue #48, docs/semantics.md);
  ``memory=0`` makes it amnesiac (what it sees is all it knows).
* ``always-book``: the memoryless policy that books every request naming a step.
* ``prerequisites``: the perfect agent, except that asked for a blocked step it executes
  the missing prerequisites itself and then the step (Section 5.4; the tool harness).
* ``synthetic``: the seeded stochastic agent; its parameters are in
  :mod:`serve.agents.synthetic` (``obey``, ``fresh``, ``cite``, ``seed``, ...).
* ``embed``: embeddings only (``POST /v1/embeddings`` accepts every scripted name).

Every chat policy also takes the helper defect rates of :mod:`serve.agents.gate_answers`
(``matcher_malformed``, ``matcher_wrong``, ``compile_empty_code``, ``compile_cancel_left``,
``compile_cycle``, ``compile_echo``), the rewriter's ``rewrite_bad`` (:mod:`serve.agents.rewrite`)
and ``drop_system`` (1: every system message is dropped before the request is counted or
answered, as a chat template without a system role does). Example: ``scripted/synthetic?obey=0.9&fresh=0.35&seed=7``. An unknown
policy is a 404 (as vLLM answers an unknown model); an unknown parameter or a value that is
not a number in range is a 400.
"""

from __future__ import annotations

import difflib
import math
from functools import lru_cache
from urllib.parse import parse_qsl

import msgspec

from serve.agents.gate_answers import HELPER_PARAMS
from serve.agents.rewrite import REWRITE_PARAMS
from serve.agents.synthetic import DEFAULTS as SYNTHETIC_DEFAULTS

__all__ = [
    "BASE_MODELS",
    "PREFIX",
    "BadModelParams",
    "ModelNotFound",
    "ModelSpec",
    "parse_model",
]

PREFIX = "scripted/"
# OURS: the chat template's behaviour; drop_system=1 drops every system message before the
# request is counted or answered, as a template without a system role does (#41)
TEMPLATE_PARAMS = frozenset({"drop_system"})
_HELPERS = frozenset(HELPER_PARAMS) | REWRITE_PARAMS | TEMPLATE_PARAMS
BASE_MODELS: dict[str, frozenset[str]] = {
    "perfect": _HELPERS | frozenset({"memory"}),
    "always-book": _HELPERS,
    "prerequisites": _HELPERS,
    "synthetic": _HELPERS | frozenset(SYNTHETIC_DEFAULTS),
    "embed": frozenset(),
}
_UNBOUNDED = frozenset(
    {"seed", "original", "checklist", "ledger", "think", "confirm_ask", "status_ask"}
)  # not rates


class ModelNotFound(LookupError):
    """No such model: HTTP 404."""


class BadModelParams(ValueError):
    """A known policy with parameters it does not take: HTTP 400."""


class ModelSpec(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    policy: str
    params: dict[str, float]

    @property
    def chat(self) -> bool:
        return self.policy != "embed"


def _value(policy: str, key: str, raw: str, known: frozenset[str]) -> float:
    if key not in known:
        allowed = ", ".join(sorted(known)) or "none"
        raise BadModelParams(f"unknown parameter {key!r} for {PREFIX}{policy}; known: {allowed}")
    try:
        value = float(raw)
    except ValueError:
        raise BadModelParams(f"parameter {key}={raw!r} is not a number") from None
    if not math.isfinite(value) or value < 0 or (key not in _UNBOUNDED and value > 1):
        raise BadModelParams(f"parameter {key}={raw!r} is out of range")
    return value


def _not_found(name: str, policy: str | None) -> str:
    """The 404's message; a ``scripted/`` name lists the scripted policies (#49)."""
    if policy is None:
        return f"The model `{name}` does not exist."
    hint = difflib.get_close_matches(policy, sorted(BASE_MODELS), n=1)
    did = f" (did you mean {PREFIX}{hint[0]}?)" if hint else ""
    policies = ", ".join(sorted(BASE_MODELS))
    return f"The model `{name}` does not exist{did}; scripted policies: {policies}"


@lru_cache(maxsize=1024)
def parse_model(name: str) -> ModelSpec:
    """The policy and parameters a model name selects (see the module docstring)."""
    base, _, query = name.partition("?")
    policy = base[len(PREFIX) :] if base.startswith(PREFIX) else None
    if policy is None or policy not in BASE_MODELS:
        raise ModelNotFound(_not_found(name, policy))
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise BadModelParams(f"malformed parameters in model name {name!r}") from None
    known = BASE_MODELS[policy]
    params = {k: _value(policy, k, v, known) for k, v in pairs}
    return ModelSpec(name=name, policy=policy, params=params)
