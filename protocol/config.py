"""The configuration: what a cell and its episodes are a function of, in one place.

:class:`Config` holds the seven fields an :class:`EpisodeSpec` and a :class:`CellKey` share
(graph size and density, domain, brief, schedule, wording tier and ambiguous rate). Both keep
them flat in their encoded form, so log lines and slugs written before this module existed
read and compare unchanged; ``.config`` reads them out and ``.of(config, ...)`` builds from
them. :meth:`Knobs.changed` is the one reading of "non-default knobs" and
:func:`config_label` the one human label of a configuration.
"""

from __future__ import annotations

import functools
from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

from protocol.domains.known import DIGESTS

__all__ = [
    "DEFAULT_DOSE",
    "PLAIN",
    "PLAIN_CONTROLS",
    "AskMode",
    "Brief",
    "CellKey",
    "Config",
    "Domain",
    "EpisodeSpec",
    "Handoff",
    "Knobs",
    "Regime",
    "Schedule",
    "SpoofVariant",
    "UserStyle",
    "config_label",
    "graph_label",
    "is_synthetic",
    "model_label",
    "scripted_served_by",
]

# A built-in domain ("procurement", "release") or a loaded file pack's name (protocol.domains.known).
Domain = str
Brief = Literal["amended", "original"]
# The probe schedule (Appendix B.4, Section 6): "earlier" is the original grid's, "regenerated"
# the amended replication's. None: the brief's own (original -> earlier, amended -> regenerated).
Schedule = Literal["earlier", "regenerated"]

Regime = Literal["no-think", "thinking"]
# The default dose of a stress knob (generator 5 on, issue #37; protocol.stress.doses). OURS: a
# quarter of the eligible planned turns (at least one), low enough that an agent can pass.
DEFAULT_DOSE = 0.25
# The scripted user's manner (issue #31, ours; protocol.user, docs/stress.md).
# restate_plain and double_plain (generator 6, issue #46): restate's and double's controls,
# the same steps asked plainly in the same slots (protocol.stress.doses).
UserStyle = Literal[
    "cooperative", "restate", "contradict", "double", "restate_plain", "double_plain"
]
# Each plain control (generator 6, issue #46) -> the style it controls.
PLAIN_CONTROLS: dict[str, UserStyle] = {"restate_plain": "restate", "double_plain": "double"}
# When the gate asks the user back (issue #38, ours; protocol.arms.askback, docs/askback.md).
AskMode = Literal["off", "unresolved", "second_reading"]
# The spoof knob's variants (protocol.stress.spoof): where the forged state text stands.
# What crosses a session boundary (the sessions knob, issue #48; OURS, docs/semantics.md)
Handoff = Literal["none", "note", "arm"]
SpoofVariant = Literal["none", "checklist", "directive", "notice", "tool_result", "receipt", "redo"]


class _Frozen(msgspec.Struct, frozen=True, kw_only=True):
    pass


class Config(_Frozen, frozen=True, kw_only=True):
    """The fields a cell and its episodes' specs share (never encoded on its own)."""

    steps: int
    density: float
    domain: Domain = "procurement"
    brief: Brief = "amended"
    schedule: Schedule | None = None  # None: the brief's own schedule
    paraphrase_tier: int = 0
    ambiguous_rate: float = 0.0


class EpisodeSpec(_Frozen, frozen=True, kw_only=True):
    """Everything an episode is a pure function of."""

    seed: int
    steps: int
    density: float
    domain: Domain = "procurement"
    brief: Brief = "amended"
    paraphrase_tier: int = 0
    ambiguous_rate: float = 0.0
    # The generator version the episode was made with (protocol.episode.generate.GENERATOR_VERSION);
    # logs written before versions existed lack it and regenerate with version 1.
    generator: int = 1
    schedule: Schedule | None = None  # None: the brief's own schedule (see Schedule)
    # A file pack's digest (protocol.domains.packs.pack_digest): the pack the episode was made from
    # (protocol.episode.versions.pool_of checks it). Unset, and so not encoded, for the built-in
    # domains, whose specs keep their encoding; not part of :class:`Config` (a cell is keyed by
    # its domain's name, and one run loads one pack per name).
    domain_digest: str | UnsetType = UNSET

    @classmethod
    def of(cls, config: Config, *, seed: int, generator: int) -> EpisodeSpec:
        """The spec of one seed of ``config``, made with generator version ``generator``."""
        return cls(seed=seed, generator=generator, **msgspec.structs.asdict(config))

    @property
    def config(self) -> Config:
        return Config(**{f: getattr(self, f) for f in Config.__struct_fields__})

    def schedule_version(self) -> Schedule:
        """The schedule this spec runs: its own, or the brief's when unset."""
        return self.schedule or ("earlier" if self.brief == "original" else "regenerated")


class Knobs(_Frozen, frozen=True, kw_only=True):
    """Variant knobs of a cell: part of its key, never new arm names."""

    checklist_mode: Literal["append", "replace"] = "append"
    directive_role: Literal["user", "system"] = "user"
    matched_step_line: bool = False
    notice: Literal["next_turn", "same_turn"] = "next_turn"
    binding: Literal["state", "request"] = "state"
    corruption: float = 0.0
    tools: bool = False
    # Memory arms (Appendix F): the recall block as the record of the past or added to the
    # full transcript; k recalled items (the paper's top-5); the recent window in exchanges
    # (the paper's last two) kept in record mode.
    memory_mode: Literal["record", "augment"] = "record"
    memory_k: int = 5
    memory_window: int = 2
    # "text": the payload protocol (ref lines; ``tools`` adds ACTION lines to it);
    # "langgraph": the real-tool harness of Appendix G (runner.harness, docs/tools.md).
    harness: Literal["text", "langgraph"] = "text"
    # Stress knobs (issue #31, ours; docs/stress.md): forged state text in the user's message
    # (protocol.stress.spoof).
    spoof: SpoofVariant = "none"
    # the tool harness's calls fail at this rate per call (protocol.stress.tool_failure)
    tool_failure: float = 0.0
    # the scripted user's manner (protocol.user): the paper's cooperative user, or one who
    # restates a refused order, or contradicts the revision once
    user_style: UserStyle = "cooperative"
    # Ask back and escalation (issue #38, ours; Section 5.5's recommendation, docs/askback.md):
    # the gate names the step it resolved; asks the user when no step resolves (or, with
    # "second_reading", when a second matcher reading disagrees); sends a refusal to the user,
    # whose confirmation admits the booking once. Off: the paper's gates.
    show: bool = False
    ask: AskMode = "off"
    escalate: bool = False
    # Generator 5 on (issue #37, protocol.stress.doses): the dose of the spoof knob and of the user's
    # style, the fraction of eligible planned turns each stresses (at least one when
    # positive); ignored by earlier generators, whose stresses followed the realized state.
    spoof_dose: float = DEFAULT_DOSE
    user_dose: float = DEFAULT_DOSE
    # At-most-once under tool failure (issue #37, ours; protocol.stress.tool_failure, docs/stress.md):
    # the share of timed-out harness calls whose write landed anyway; on, the harness lists the
    # read-only status tool and a timeout's result says its outcome is unknown. 0: off.
    tool_failure_landed: float = 0.0
    # Beyond one-shot state (issue #48, ours; protocol.stress.budget, docs/semantics.md): the
    # cap N of runs of one budgeted step the seed picks (generator 6 on). Its first run and
    # N - 1 more requests are eligible, one request more is a trap on the over_budget channel.
    # 0: off (every step performed once, the paper's rule).
    budget: int = 0
    # The turns T a run of one seed-picked step stays valid (issue #48, generator 6): the user
    # asks for it again once before T turns have passed since its run (a redo probe) and once
    # after (the run has lapsed: it must be run again). 0: off (a run never lapses).
    expiry: int = 0
    # Several sessions (issue #48, generator 6; protocol.stress.sessions): the episode's turns
    # split into this many sessions at boundaries the seed places; at each the conversation
    # restarts with the brief. 0: off (one session, the paper's).
    sessions: int = 0
    # What crosses a boundary: "none" (nothing), "note" (the agent's own handoff note, asked
    # for with rule_strings.HANDOFF_REQUEST), "arm" (what the arm keeps: ledger, memory).
    handoff: Handoff = "none"
    # The sessions knob's variant (issue #48): a model of the grid (its name) that runs every
    # other session (the second, the fourth, ...) in the cell's model's place: a handoff
    # between agents. "": the cell's model runs every session.
    next_model: str = ""
    # The requests K for the closed alternative of one seed-picked step (issue #48, generator
    # 6): the brief lists the step and an alternative as "at most one of the two"; once the
    # step is done the user asks for the alternative K times, each a trap on the
    # exclusive_closed channel. 0: off (no alternative).
    exclusive: int = 0

    def changed(self) -> dict[str, object]:
        """The knobs set away from their defaults, in field order (empty: the plain arm)."""
        default = _defaults(type(self))
        return {f: v for f in self.__struct_fields__ if (v := getattr(self, f)) != default[f]}


PLAIN = Knobs()  # every knob at its default: the plain arm


@functools.cache
def _defaults(kind: type[Knobs]) -> dict[str, object]:
    """Each knob's default (of ``Knobs``, or of a subclass a test adds a toy knob to)."""
    plain = kind()
    return {f: getattr(plain, f) for f in kind.__struct_fields__}


class CellKey(_Frozen, frozen=True, kw_only=True):
    """A cell: one arm on one configuration. Its episodes' specs share :class:`Config`'s
    fields with it (:attr:`config`, :meth:`spec`); the encoded form stays flat."""

    model: str
    regime: Regime = "no-think"
    steps: int
    density: float
    domain: Domain = "procurement"
    brief: Brief = "amended"
    arm: str
    knobs: Knobs = Knobs()
    schedule: Schedule | None = None  # None: the brief's own schedule
    paraphrase_tier: int = 0
    ambiguous_rate: float = 0.0
    # Honest labels (#40, OURS): the scripted model that served this cell's agent when it is
    # not the model named (``--served scripted/synthetic`` on a ``qwen3-235b`` cell); "" for a
    # real model. Not in the slug (log file names stay), shown by :func:`model_label`.
    served_by: str = ""

    @classmethod
    def of(
        cls,
        config: Config,
        *,
        model: str,
        regime: Regime,
        arm: str,
        knobs: Knobs = PLAIN,
        served_by: str = "",
    ) -> CellKey:
        return cls(
            model=model,
            regime=regime,
            arm=arm,
            knobs=knobs,
            served_by=served_by,
            **msgspec.structs.asdict(config),
        )

    @property
    def config(self) -> Config:
        return Config(**{f: getattr(self, f) for f in Config.__struct_fields__})

    def spec(self, seed: int, generator: int) -> EpisodeSpec:
        """The spec of this cell's episode of ``seed``, with the digest of the loaded pack
        when the cell's domain is a file pack (:func:`protocol.domains.known.register`)."""
        spec = EpisodeSpec.of(self.config, seed=seed, generator=generator)
        digest = DIGESTS.get(self.domain)
        return spec if digest is None else msgspec.structs.replace(spec, domain_digest=digest)

    def slug(self) -> str:
        """A file-name-safe identifier, stable across runs (fields at their defaults add
        nothing, so slugs of cells written before a field existed are unchanged)."""
        key = _ENCODE(self)
        slug = _SLUGS.get(key)
        if slug is None:
            if len(_SLUGS) >= _MAX_SLUGS:
                _SLUGS.clear()
            slug = _SLUGS[key] = _slug(self)
        return slug


# A run asks for a cell's slug several times per episode (its log file, its episode id, the
# start order, the replica key) and has a handful of cells: each slug is made once (#50),
# keyed by the cell's encoding (one C call; not by equality, where 1 == 1.0 in a knob would
# hand one spelling's slug to the other), bounded.
_SLUGS: dict[bytes, str] = {}
_MAX_SLUGS = 4096
_ENCODE = msgspec.json.Encoder().encode


def _slug(cell: CellKey) -> str:
    """:meth:`CellKey.slug`."""
    parts = [
        _safe(cell.model),
        cell.regime,
        f"S{cell.steps}",
        f"rho{cell.density:g}",
        cell.domain,
        cell.brief,
        cell.arm,
    ]
    if cell.schedule is not None:
        parts.append(f"sched-{cell.schedule}")
    if cell.paraphrase_tier:
        parts.append(f"tier{cell.paraphrase_tier}")
    if cell.ambiguous_rate:
        parts.append(f"amb{cell.ambiguous_rate:g}")
    if changed := cell.knobs.changed():  # a model name in a knob, as the model's own
        parts.append("-".join(f"{f}={_safe(str(v))}" for f, v in changed.items()))
    return "__".join(parts)


def _safe(text: str) -> str:
    """``text`` safe in a file name (a model's name: the slug's own replacements)."""
    return text.replace("/", "_").replace("?", "_").replace("&", "_").replace("=", "-")


def graph_label(steps: int, density: float) -> str:
    """``S=10 rho=0.15``."""
    return f"S={steps} rho={density:g}"


SCRIPTED = "scripted/"  # the scripted endpoint's model names (serve.endpoint.models)


def scripted_served_by(model: str, served: str) -> str:
    """What a cell's ``served_by`` holds: the served name when it is a scripted model and not
    the model's own name, else ""."""
    return served if served.startswith(SCRIPTED) and served != model else ""


def model_label(key: CellKey) -> str:
    """The model as every label shows it: ``qwen3-235b <- scripted/synthetic`` when a scripted
    model served the agent under another name (its parameters after ``?`` left to the
    JSON line's ``served_by``), else the model's name."""
    if not key.served_by:
        return key.model
    return f"{key.model} <- {key.served_by.split('?', 1)[0]}"


def is_synthetic(key: CellKey) -> bool:
    """Whether the cell's agent is the scripted synthetic agent (by its name or served name)."""
    return (key.served_by or key.model).startswith(SCRIPTED + "synthetic")


def config_label(config: CellKey) -> str:
    """``model regime S=10 rho=0.15 domain brief`` plus any non-default knob, schedule, tier
    and ambiguous rate (the arm is not part of it); the model as :func:`model_label` shows it."""
    parts = [model_label(config), config.regime, graph_label(config.steps, config.density)]
    parts += [config.domain, config.brief]
    parts += [f"{k}={v}" for k, v in config.knobs.changed().items()]
    if config.schedule:
        parts.append(f"schedule={config.schedule}")
    if config.paraphrase_tier:
        parts.append(f"tier={config.paraphrase_tier}")
    if config.ambiguous_rate:
        parts.append(f"amb={config.ambiguous_rate:g}")
    return " ".join(parts)
