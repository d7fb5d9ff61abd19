"""The tables of a grid file as msgspec Structs: ``[[endpoints]]``, ``[[models]]``,
``[decoding]``, ``[run]`` (with its ``[[run.variants]]``, ``[[run.graphs]]`` and
``[[run.wordings]]``) and ``[memory]``. :class:`~runner.grid.cells.Grid` assembles them,
:mod:`runner.grid.expand` loads it and :mod:`runner.grid.checks` checks it."""

from __future__ import annotations

from typing import Any, Literal, TypedDict
from urllib.parse import urlsplit

import msgspec

from protocol.arms.table import ladder
from protocol.config import Brief, Domain, Schedule
from protocol.episode.versions import GENERATOR_VERSION
from protocol.records import Knobs, Role
from protocol.visible import visible
from runner.client.affinity import Routing

__all__ = [
    "DEFAULT_MAX_IN_FLIGHT",
    "EMBEDDED",
    "ChatKwargs",
    "Decoding",
    "EndpointConfig",
    "GraphConfig",
    "GridData",
    "MemorySettings",
    "ModelConfig",
    "RunConfig",
    "Variant",
    "Wording",
    "url_problem",
]

EMBEDDED = "embedded"
# Requests in flight per endpoint when a grid (or `ladder run`'s flags) gives none (OURS):
# vLLM-sized for one GPU replica and below the usual vendor rate limits; docs/cli.md.
DEFAULT_MAX_IN_FLIGHT = 64
# A grid as builtins (what tomllib reads, what msgspec.to_builtins gives back): untyped
# until parse_grid checks it into a Grid.
GridData = dict[str, Any]


class _Strict(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    pass


class EndpointConfig(_Strict):
    name: str
    base_url: str | None = None  # "embedded" for the in-process scripted endpoint
    base_urls: list[str] = []  # replicas of one server, sharing its load
    api_key_env: str | None = None  # the environment variable holding the API key
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    adaptive: bool = False
    start_in_flight: int | None = None
    routing: Routing = "affinity"  # runner.client.affinity: by episode, or least-in-flight
    replica_slots: int = 0  # requests in flight that saturate one replica; 0: its share

    def urls(self) -> list[str]:
        return self.base_urls or ([self.base_url] if self.base_url else [EMBEDDED])


class ChatKwargs(TypedDict):
    """The keyword arguments of ``runner.client.endpoint.Endpoint.chat`` for one model and role."""

    model: str
    max_tokens: int
    role: Role
    thinking: bool
    extra: dict[str, object]
    temperature: float


class ModelConfig(_Strict):
    name: str  # the label in cells and logs
    endpoint: str = EMBEDDED
    served: str | None = None  # the served model name (defaults to name)
    regime: Literal["no-think", "thinking"] = "no-think"
    select: Literal["request", "checkpoint", "vendor"] = "checkpoint"
    extra: dict[str, object] = {}  # vendor flags, merged into every request body
    compile_model: str | None = None  # another model's name to compile for this one
    # The model's context in tokens, for `ladder validate`'s overflow warning (#40); None:
    # the server's model card tells (vLLM's /models max_model_len), else unknown.
    context: int | None = None
    # where the agent's brief goes: the system message (the paper's), or "user": leading the
    # first user turn, for a chat template without a system role (runner.execution.brief_check)
    brief_role: Literal["system", "user"] = "system"
    # Helpers that do not evict the agent (#41): the compiler's and the matcher's requests go
    # to this endpoint (another server or replica of the same model) instead of ``endpoint``;
    # and / or, on a llama.cpp server with several slots (``-np``), each role's requests
    # carry llama.cpp's ``id_slot`` so helpers never take the agent's slot and its prefix
    helper_endpoint: str | None = None
    agent_slot: int | None = None
    helper_slot: int | None = None

    def endpoint_for(self, role: Role) -> str:
        """The endpoint a request of ``role`` goes to."""
        helper = role in ("matcher", "compiler") and self.helper_endpoint is not None
        return self.helper_endpoint if helper and self.helper_endpoint else self.endpoint

    def slot_for(self, role: Role) -> int | None:
        """llama.cpp's ``id_slot`` for a request of ``role`` (None: the server picks)."""
        return self.helper_slot if role in ("matcher", "compiler") else self.agent_slot

    def served_name(self) -> str:
        return self.served or self.name

    def request_extra(self) -> dict[str, object]:
        """Body fields selecting the regime: vLLM's chat_template_kwargs for hybrids."""
        extra = dict(self.extra)
        if self.select == "request":
            extra.setdefault("chat_template_kwargs", {"enable_thinking": self.regime == "thinking"})
        return extra

    def chat_kwargs(self, decoding: Decoding, role: Role) -> ChatKwargs:
        """The one mapping from (model, decoding, role) to a chat request: the served name,
        the role's budget in this model's regime, the regime switch and the temperature."""
        extra = self.request_extra()
        slot = self.slot_for(role)
        if slot is not None:
            extra["id_slot"] = slot
        if decoding.top_p is not None:  # --top-p (#40)
            extra["top_p"] = decoding.top_p
        return ChatKwargs(
            model=self.served_name(),
            max_tokens=decoding.budget(role)[self.regime],
            role=role,
            thinking=self.regime == "thinking",
            extra=extra,
            temperature=decoding.temperature,
        )


class Decoding(_Strict):
    temperature: float = 0.0
    top_p: float | None = None  # sent as the body's top_p when set (--top-p, #40)
    reply_budget: dict[str, int] = msgspec.field(
        default_factory=lambda: {"no-think": 400, "thinking": 2500}
    )
    matcher_budget: dict[str, int] = msgspec.field(
        default_factory=lambda: {"no-think": 200, "thinking": 2500}
    )
    compiler_budget: dict[str, int] = msgspec.field(
        default_factory=lambda: {"no-think": 3000, "thinking": 6000}
    )
    timeout_s: float = 900.0
    attempts: int = 6
    backoff_s: float = 1.0

    def budget(self, role: Role) -> dict[str, int]:
        """The token budgets by regime of the calls made for ``role``."""
        if role == "matcher":
            return self.matcher_budget
        if role in ("compiler", "memory"):  # mem0's extraction writes JSON, as the compiler
            return self.compiler_budget
        return self.reply_budget


class GraphConfig(_Strict):
    steps: int
    density: float


class Variant(Knobs, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An extra cell for one arm with non-default knobs (the knob fields of Knobs), run by
    every model of the grid, or by the models ``models`` names (ours, #48: a handoff
    between agents names the first model alone)."""

    arm: str
    models: tuple[str, ...] = ()  # the models that run it (empty: every model)

    def runs_for(self, model: str) -> bool:
        """Whether ``model`` runs this variant's cells."""
        return not self.models or model in self.models

    def knobs(self) -> Knobs:
        return Knobs(**{f: getattr(self, f) for f in Knobs.__struct_fields__})


class Wording(_Strict):
    """One request-wording condition (Table 4's columns): tier and ambiguous-probe rate."""

    paraphrase_tier: int = 0
    ambiguous_rate: float = 0.0


class RunConfig(_Strict):
    seeds: str = "100-227"
    steps: list[int] = msgspec.field(default_factory=lambda: [15])
    density: list[float] = msgspec.field(default_factory=lambda: [0.3])
    graphs: list[GraphConfig] = []  # explicit (S, rho) pairs; replaces steps x density
    domains: list[Domain] = msgspec.field(default_factory=lambda: ["procurement"])
    briefs: list[Brief] = msgspec.field(default_factory=lambda: ["amended"])
    arms: list[str] = msgspec.field(default_factory=lambda: list(ladder()))  # the paper's rungs
    variants: list[Variant] = []
    concurrency: int = 256  # episodes in flight
    # Repeated trials (--trials K, #40): each seed of each cell runs K times at the grid's
    # temperature, scored per trial and as pass^k (scoring.results.trials); 1: once, as before.
    trials: int = 1
    paraphrase_tier: int = 0
    paraphrase_cache: str | None = None  # the held-out cache (JSON) tier 2 reads
    ambiguous_rate: float = 0.0
    # The compile cache key (runner.gates.compiler): "spec" shares one compile per (compile model,
    # seed, S, rho, domain) across the briefs, as Appendix B.3 caches it; "brief" keys it by
    # the brief text too (one compile per brief).
    compile_cache: Literal["spec", "brief"] = "spec"
    # The matcher cache key (runner.gates.matcher): "shared" gives the directive, enforcement and
    # hybrid arms of one seed the same answer per (model, regime, prompt) (ours: the prompt
    # does not depend on the arm); "arm" keys it by the arm too (one matcher call per arm).
    matcher_cache: Literal["shared", "arm"] = "shared"
    # The generator version (protocol.episode.generate.GENERATOR_VERSION); an older one reproduces
    # episodes of runs made with it.
    generator: int = GENERATOR_VERSION
    # Probe schedules (Appendix B.4): "earlier", "regenerated"; empty: each brief's own
    # (original -> earlier, amended -> regenerated). ["earlier", "regenerated"] with the
    # original brief runs the original grid and its schedule control side by side.
    schedules: list[Schedule] = []
    # Several wording conditions side by side (Table 4: canonical, held-out, held-out with
    # ambiguous probes), each its own cells; empty: the one of paraphrase_tier /
    # ambiguous_rate above.
    wordings: list[Wording] = []

    def wording_list(self) -> list[Wording]:
        return self.wordings or [
            Wording(paraphrase_tier=self.paraphrase_tier, ambiguous_rate=self.ambiguous_rate)
        ]


class MemorySettings(_Strict):
    """The memory arms' embedder (Appendix F): an endpoint's ``/v1/embeddings``."""

    embedder: Literal["endpoint"] = "endpoint"
    embed_endpoint: str | None = None  # an [[endpoints]] name; default: the cell model's
    embed_model: str | None = None  # the served embedding model; default: the cell's model


def url_problem(url: str, *, suggest: bool = True) -> str | None:
    """Why ``url`` cannot be an endpoint's base URL (None when it can); with ``suggest``
    the URL it probably meant (a grid's line, which names its file and endpoint, goes
    without, to fit 80 columns: #49)."""
    if url == EMBEDDED:
        return None
    shown = redact_url(url)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        bare = shown.split("://")[-1]
        example = f"http://{bare}" if "://" not in shown or parts.scheme else shown
        return f"{shown!r} needs http(s)://" + (f": {example}?" if suggest else "")
    if "@" in parts.netloc:
        return (
            f"base URL {shown!r} carries credentials (user:password@), refused: a URL is "
            "printed and stored; name the key's environment variable in api_key_env"
        )
    return None


def redact_url(url: str) -> str:
    """``url`` with any credentials (``user:password@``) shown as ``***@``, and its control
    characters escaped: the form every printed or stored URL takes."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    host_end = min(
        (i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest)
    )
    netloc = rest[:host_end]
    if "@" in netloc:
        rest = "***@" + netloc.rpartition("@")[2] + rest[host_end:]
    return visible(scheme + sep + rest, newlines=False)
