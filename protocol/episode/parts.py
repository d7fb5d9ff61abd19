"""What every generator version builds the same way: the RNG stream seeds, the steps with
their completion codes, and the revision message."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from protocol.brief import render_brief, render_revision
from protocol.domains.shape import Template
from protocol.records import Episode, EpisodeSpec, Revision, Step, Turn
from protocol.state.machine import sort_ids

__all__ = ["assemble", "steps_and_revision", "stream_seed"]


def stream_seed(spec: EpisodeSpec, stream: str) -> str:
    """The seed string of one RNG stream (string seeds hash with SHA-512, independent of
    ``PYTHONHASHSEED``). From generator 5 (issue #37) no stream reads the domain's name, so
    two domains' episodes of one seed share graph, revision, schedule, codes and work orders
    (domains pair by seed; renaming a pack changes nothing)."""
    domain = "paired" if spec.generator >= 5 else spec.domain
    return f"{stream}|{spec.seed}|{spec.steps}|{spec.density!r}|{domain}"


def steps_and_revision(
    rng: random.Random,
    ids: Sequence[str],
    by_id: Mapping[str, Template],
    deps: Mapping[str, frozenset[str]],
    cancel: str,
    rewires: dict[str, tuple[str, ...]],
    relax: tuple[str, str] | None,
) -> tuple[tuple[Step, ...], Revision]:
    """The steps (codes drawn from ``rng``, in id order) and the revision message."""
    codes = rng.sample(range(1000, 10000), len(ids))
    steps = tuple(
        Step(
            id=v, slug=by_id[v].slug, text=by_id[v].text, code=f"RC-{code}", deps=sort_ids(deps[v])
        )
        for v, code in zip(ids, codes, strict=True)
    )
    texts = {s.id: s.text for s in steps}
    revision = Revision(
        cancel=cancel,
        rewires=rewires,
        relax=relax,
        text=render_revision(texts, cancel, rewires, relax),
    )
    return steps, revision


def assemble(
    spec: EpisodeSpec,
    steps: tuple[Step, ...],
    revision: Revision,
    turns: Sequence[Turn],
    held_out: dict[str, tuple[str, ...]] | None = None,
) -> Episode:
    """The episode, its brief rendered from the steps."""
    return Episode(
        spec=spec,
        steps=steps,
        revision=revision,
        turns=tuple(turns),
        brief=render_brief(steps, spec.brief, third_party=spec.generator >= 5),
        held_out_asks=held_out or {},
    )
