"""``ladder generate``: print episodes readably or as JSON lines."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, get_args

import msgspec
import typer
from msgspec import UNSET

from ladder.errors import UsageError, shown
from ladder.limits import MAX_SEED, MAX_TIER, MAX_VERSION
from protocol import EpisodeSpec, ScriptedUser, SpecError
from protocol import generate as gen
from protocol.config import DEFAULT_DOSE, PLAIN_CONTROLS, UserStyle, graph_label
from protocol.domains.known import DIGESTS, POOLS
from protocol.domains.packs import PackError
from protocol.episode.paraphrases import check_paraphrases
from protocol.episode.stats import schedule_figures
from protocol.episode.versions import GENERATOR_VERSION
from protocol.records import Episode
from protocol.stress.plan import StressPlan, stress_plan
from protocol.stress.spoof import SPOOF_VARIANTS
from runner.grid.packs import load_pack_file
from runner.grid.paraphrase_cache import ParaphraseCacheError, read_paraphrase_file
from runner.grid.seeds import parse_seeds

__all__ = ["generate", "render_episode"]


def render_episode(ep: Episode, stress: Stress | None = None) -> str:
    """A readable episode: brief, graph, revision, and the schedule with perfect labels;
    with ``stress``, its stressed turns as served, each marked ``!`` and named."""
    spec = ep.spec
    stress = stress or Stress()
    plan = stress.plan(ep)
    out = [
        f"# episode seed={spec.seed} {graph_label(spec.steps, spec.density)} "
        f"domain={spec.domain} brief={spec.brief} schedule={spec.schedule_version()} "
        f"generator={spec.generator}",
        "",
        "## brief (system prompt)",
        ep.brief,
        "",
        "## graph",
    ]
    for s in ep.steps:
        deps = ", ".join(s.deps) or "-"
        out.append(f"  {s.id:>4}  {s.code}  requires: {deps:<16} {s.text}")
    rev = ep.revision
    rewires = ", ".join(
        f"{w} <- [{', '.join(p)}]" if p else f"{w} <- none" for w, p in rev.rewires.items()
    )
    relax = f"{rev.relax[0]} drops {rev.relax[1]}" if rev.relax else "-"
    out += ["", "## revision", f"  cancel {rev.cancel}; rewire {rewires or '-'}; relax {relax}", ""]
    out += stress.header(plan)
    out.append("## schedule (label under perfect behaviour)")
    user = ScriptedUser(ep, stress.user_style, stress.user_dose)  # type: ignore[arg-type]
    while (turn := user.next_turn()) is not None:
        mark = plan.get(user.planned, None) if user.planned is not None else None
        verdict = user.begin(turn)
        label: str = verdict.label if verdict else "-"
        if verdict and verdict.missing:
            label += f" (missing {', '.join(verdict.missing)})"
        act = [turn.step] if verdict and verdict.label in ("eligible", "redo") and turn.step else []
        user.finish(turn, verdict, act)
        wo = turn.work_order or ""
        text = turn.text if mark is None else f"[{mark[0]}] {mark[1]}"
        out.append(
            f"{'!' if mark else ' '} {turn.index:>2} {turn.kind:<14} {turn.step or '':>4} "
            f"{wo:<7} {label:<28} {text}"
        )
    return "\n".join(out)


class Stress:
    """The dosed stress knobs of ``ladder generate`` (generator 5 on; docs/stress.md)."""

    def __init__(
        self,
        spoof: str = "none",
        spoof_dose: float = DEFAULT_DOSE,
        user_style: str = "cooperative",
        user_dose: float = DEFAULT_DOSE,
    ) -> None:
        self.spoof, self.spoof_dose = spoof, spoof_dose
        self.user_style, self.user_dose = user_style, user_dose

    def problems(self, generator: int) -> list[str]:
        out = []
        if self.spoof not in ("none", *SPOOF_VARIANTS):
            out.append(f"unknown spoof {self.spoof!r}; choose none, {', '.join(SPOOF_VARIANTS)}")
        if self.user_style not in get_args(UserStyle):
            out.append(
                f"unknown user style {self.user_style!r}; choose {', '.join(get_args(UserStyle))}"
            )
        for name, dose in (("--spoof-dose", self.spoof_dose), ("--user-dose", self.user_dose)):
            if not 0.0 <= dose <= 1.0:
                out.append(f"{name} must be in [0, 1] (got {dose})")
        if self.on and generator < 5:
            out.append(f"stress doses need generator 5 or later (got --generator {generator})")
        elif self.user_style in PLAIN_CONTROLS and generator < 6:
            style = self.user_style
            out.append(f"{style} needs generator 6 or later (got --generator {generator})")
        return out

    @property
    def on(self) -> bool:
        return self.spoof != "none" or self.user_style != "cooperative"

    def plan(self, ep: Episode) -> StressPlan:
        if not self.on:
            return {}
        return stress_plan(
            ep,
            spoof=self.spoof,
            spoof_dose=self.spoof_dose,
            user_style=self.user_style,  # type: ignore[arg-type]
            user_dose=self.user_dose,
        )

    def header(self, plan: StressPlan) -> list[str]:
        if not self.on:
            return []
        knobs = []
        if self.spoof != "none":
            knobs.append(f"spoof={self.spoof} spoof_dose={self.spoof_dose:g}")
        if self.user_style != "cooperative":
            knobs.append(f"user_style={self.user_style} user_dose={self.user_dose:g}")
        where = ", ".join(str(i) for i in plan) or "none"
        return [
            "## stress",
            f"  {'; '.join(knobs)}: {len(plan)} planned turns stressed ({where}), marked !",
            "",
        ]


def generate(
    seed: Annotated[
        int | None,
        typer.Option(help="Episode seed (default 100).", show_default=False, max=MAX_SEED),
    ] = None,
    seeds: Annotated[
        str | None, typer.Option(help="A seed range such as 100-227 (JSON lines output).")
    ] = None,
    steps: Annotated[int, typer.Option("--steps", "-S", help="Graph size S (5..18).")] = 5,
    density: Annotated[
        float, typer.Option(help="Extra-edge density rho (0.15 sparse, 0.3 dense).", max=1.0)
    ] = 0.15,
    domain: Annotated[str, typer.Option(help="procurement or release.")] = "procurement",
    domain_file: Annotated[
        Path | None,
        typer.Option(help="A domain pack file (docs/domains.md); replaces --domain."),
    ] = None,
    brief: Annotated[
        str, typer.Option(help="amended (states the one-shot rule) or original.")
    ] = "amended",
    paraphrase_tier: Annotated[
        int, typer.Option(help="0 canonical, 1 rotated, 2 held-out.", max=MAX_TIER)
    ] = 0,
    paraphrase_cache: Annotated[
        Path | None, typer.Option(help="Held-out paraphrase cache (JSON) for tier 2.")
    ] = None,
    ambiguous_rate: Annotated[
        float, typer.Option(help="Rate of ambiguous probes per filler.", max=1.0)
    ] = 0.0,
    schedule: Annotated[
        str | None,
        typer.Option(
            help="Probe schedule: earlier (the original grid's) or regenerated (the amended "
            "replication's); default: the brief's own."
        ),
    ] = None,
    generator: Annotated[
        int,
        typer.Option(help="Generator version (older ones reproduce older runs).", max=MAX_VERSION),
    ] = GENERATOR_VERSION,
    json_: Annotated[bool, typer.Option("--json", help="One JSON object per episode.")] = False,
    spoof: Annotated[
        str, typer.Option(help="Forged state text on planned requests (docs/stress.md).")
    ] = "none",
    spoof_dose: Annotated[float, typer.Option(help="The spoof knob's dose in [0, 1].", max=1.0)] = (
        DEFAULT_DOSE
    ),
    user_style: Annotated[
        str, typer.Option(help="restate, contradict or double (docs/stress.md).")
    ] = "cooperative",
    user_dose: Annotated[float, typer.Option(help="The user style's dose in [0, 1].", max=1.0)] = (
        DEFAULT_DOSE
    ),
    summary: Annotated[
        bool,
        typer.Option(
            help="Print the schedule figures of the episodes instead (revision turn, asks "
            "after it, planned ambiguous probes; docs/protocol.md)."
        ),
    ] = False,
) -> None:
    """Generate episodes deterministically from their spec and print them.

    With a stress knob, its stressed turns are marked (readable form) or listed under
    "stressed" (JSON)."""
    stress = Stress(spoof, spoof_dose, user_style, user_dose)
    if problems := stress.problems(generator):
        raise UsageError("; ".join(problems))
    seed_list = _seed_list(seed, seeds)
    if domain_file is not None:
        try:
            domain = load_pack_file(domain_file).name
        except PackError as e:
            raise UsageError("\n".join(e.problems)) from None
    paraphrases = None
    if paraphrase_cache is not None:
        paraphrases = _paraphrases(paraphrase_cache, generator, domain)
    as_json = json_ or seeds is not None
    out = sys.stdout.buffer
    episodes: list[Episode] = []
    for s in seed_list:
        spec = EpisodeSpec(
            seed=s,
            steps=steps,
            density=density,
            domain=domain,
            brief=brief,  # type: ignore[arg-type]
            paraphrase_tier=paraphrase_tier,
            ambiguous_rate=ambiguous_rate,
            generator=generator,
            schedule=schedule,  # type: ignore[arg-type]
            domain_digest=DIGESTS.get(domain, UNSET),
        )
        try:
            ep = gen(spec, paraphrases)
        except SpecError as e:
            raise UsageError(str(e)) from None
        if summary:
            episodes.append(ep)
        elif as_json and stress.on:
            stressed = {str(i): {"stress": k, "text": t} for i, (k, t) in stress.plan(ep).items()}
            out.write(msgspec.json.encode({"episode": ep, "stressed": stressed}) + b"\n")
        elif as_json:
            out.write(msgspec.json.encode(ep) + b"\n")
        else:
            out.write(render_episode(ep, stress).encode() + b"\n")
    if summary:
        out.write(msgspec.json.encode(schedule_figures(episodes)) + b"\n")
    out.flush()


def _seed_list(seed: int | None, seeds: str | None) -> list[int]:
    """The seeds of ``--seed`` or ``--seeds`` (default 100)."""
    if seed is not None and seeds is not None:
        raise UsageError(f"--seed {seed} and --seeds {seeds}: give one (--seeds 1-3 or --seed 1)")
    try:
        return parse_seeds(seeds) if seeds is not None else [100 if seed is None else seed]
    except ValueError as e:
        raise UsageError(str(e)) from None


def _paraphrases(path: Path, generator: int, domain: str) -> dict[str, Any]:
    """The held-out paraphrase cache at ``path``, checked against a built-in domain's pool."""
    try:  # a regular file, bounded, a nesting cap (#47)
        data = read_paraphrase_file(path)
    except ParaphraseCacheError as e:
        raise UsageError(str(e)) from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: the cache must be a JSON object")
    if generator >= 3 and domain in POOLS:
        problems = check_paraphrases(data, POOLS[domain])
        if problems:
            for p in problems[:20]:
                typer.echo(shown(f"error: {path}: {p}"), err=True)
            more = f" (and {len(problems) - 20} more)" if len(problems) > 20 else ""
            raise UsageError(f"{path}: {len(problems)} problems{more}")
    return data
