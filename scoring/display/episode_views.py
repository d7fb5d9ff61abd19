"""The views ``ladder show`` and ``ladder view`` draw (the Structs of :mod:`scoring.display.models`),
built from a logged record and its score (:func:`scoring.replay.episode_score.score_episode`). Pure; no
scoring rule of its own: every verdict, label and channel here is the replay's.

* :func:`episode_row`: one line of an episode list (outcome under both scorings, channels,
  tokens and helper calls as :mod:`scoring.analyses.cost` counts them, wall time), built by
  :func:`facts_row` from the record's facts (:mod:`scoring.display.episode_facts`), as the
  viewer's index builds it.
* :func:`episode_view`: one episode: its header, its turns (:func:`scoring.display.turns.turn_views`:
  kind, label under both scorings, the user text as sent with the arm's additions apart, the
  reply, bookings, errors, the matcher's answer, per-call tokens and latency, ...) and the
  compiled graph against the generator's (:func:`compile_view`).
* :func:`compare_view`: the same seed under two arms, turn by turn, planned turns paired,
  the turns whose outcome differs marked.
* :func:`filter_rows`: the episode list's filters.

The run's overview (cells, contrasts, a cell's cost) is :mod:`scoring.display.run_overview`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from protocol.config import model_label
from protocol.records import (
    CellKey,
    Episode,
    EpisodeRecord,
    Knobs,
)
from protocol.state.machine import sort_ids
from protocol.state.receipts import normalize_code
from scoring.analyses.truncation import cut_replies
from scoring.display.episode_facts import EpisodeFacts, episode_facts
from scoring.display.models import (
    CompareRow,
    CompareView,
    CompileStepView,
    CompileView,
    EpisodeView,
    HelperCalls,
    RevisionView,
    RowView,
    Tokens,
    TurnView,
)
from scoring.display.sessions_view import in_sessions
from scoring.display.turns import turn_views
from scoring.replay.episode_score import EpisodeScore

__all__ = [
    "arm_label",
    "compare_view",
    "compile_view",
    "episode_row",
    "episode_view",
    "facts_row",
    "filter_rows",
    "pairing_key",
]


def pairing_key(key: CellKey) -> CellKey:
    """What cells share when their seeds pair and their costs compare (as in
    :func:`scoring.analyses.cost.cost_rows`' ``x_raw``): every field but the arm and the knobs."""
    return msgspec.structs.replace(key, arm="", knobs=Knobs())


def arm_label(key: CellKey) -> str:
    """The arm with its non-default knobs: ``enforce (corruption=0.02)``."""
    knobs = [f"{f}={v}" for f, v in key.knobs.changed().items()]
    return f"{key.arm} ({', '.join(knobs)})" if knobs else key.arm


def episode_row(record: EpisodeRecord, score: EpisodeScore) -> RowView:
    """One row of an episode list: the record's seed and outcome under both scorings; its
    helper calls and tokens as :func:`scoring.analyses.cost.cost_rows` counts them (an
    episode that did not complete has no cost row and counts its helper requests from its
    calls). The record's facts (:func:`scoring.display.episode_facts.episode_facts`) then
    :func:`facts_row`, as the viewer's index builds it."""
    return facts_row(record.cell.slug(), episode_facts(record), score)


def facts_row(slug: str, facts: EpisodeFacts, score: EpisodeScore) -> RowView:
    """The row of the episode behind ``facts`` (its cell's slug, its score): what the
    viewer's index builds when a page asks, without the record (#50)."""
    cost = facts.cost
    counted = score.counted
    return RowView(
        slug=slug,
        arm=arm_label(score.cell),
        seed=score.seed,
        trial=score.trial,
        termination=score.termination,
        counted=counted,
        strict=score.primary.success if counted else None,  # None: infra, unscorable
        decline_aware=score.decline_aware.success if counted else None,
        channels={ch: n for ch, n in score.primary.channels.items() if n},
        decline_aware_channels={ch: n for ch, n in score.decline_aware.channels.items() if n},
        turns=facts.turns,
        turns_ok=score.primary.turns_ok,
        tokens=Tokens(
            agent=facts.agent_tokens,
            helper=facts.helper_tokens if cost is None else cost.helper_tokens,
        ),
        helpers=HelperCalls()
        if cost is None
        else HelperCalls(
            needed=cost.matcher_made
            + cost.matcher_cached
            + cost.compiler_made
            + cost.compiler_cached,
            made=cost.matcher_made + cost.compiler_made,
            cached=cost.matcher_cached + cost.compiler_cached,
        ),
        wall_s=facts.wall_s,
        corruptions=facts.corruptions,
        refused=score.refused,
        mismatches=len(score.mismatches),
    )


def filter_rows(
    rows: Iterable[RowView],
    *,
    failed: str | None = None,
    channel: str | None = None,
    seed: int | None = None,
    trial: int | None = None,
) -> list[RowView]:
    """Rows kept by the list's filters. ``failed`` names a scoring (``strict`` or
    ``decline_aware``): only episodes that are not a success under it (infrastructure errors
    included); ``channel``: episodes with an error in that channel (primary scoring);
    ``seed``, ``trial``: that seed's, that trial's."""
    out = []
    for r in rows:
        if failed and (r.strict if failed == "strict" else r.decline_aware) is True:
            continue
        if channel and not r.channels.get(channel):
            continue
        if seed is not None and r.seed != seed:
            continue
        if trial is not None and r.trial != trial:
            continue
        out.append(r)
    return out


def compile_view(record: EpisodeRecord, episode: Episode | None) -> CompileView | None:
    """The compiled graph and revision (as logged) beside the generator's, per step, with
    each difference marked; None when the episode did not compile."""
    info = record.compile
    if info is None:
        return None
    truth = {s.id: s for s in episode.steps} if episode else {}
    compiled = {s.id: s for s in info.graph}
    steps = []
    for sid in sort_ids(set(truth) | set(compiled)):
        c, g = compiled.get(sid), truth.get(sid)
        c_deps = list(sort_ids(c.deps)) if c else None
        g_deps = list(g.deps) if g else None
        steps.append(
            CompileStepView(
                step=sid,
                generator_deps=g_deps,
                compiled_deps=c_deps,
                generator_code=g.code if g else None,
                compiled_code=c.code if c else None,
                deps_differ=g_deps is None or c_deps is None or set(g_deps) != set(c_deps),
                code_differs=g is None or c is None or normalize_code(c.code) != g.code,
            )
        )
    generator_rev = None
    if episode is not None:
        r = episode.revision
        generator_rev = RevisionView(
            cancel=r.cancel,
            rewires={k: list(v) for k, v in r.rewires.items()},
            relax=list(r.relax) if r.relax else None,
        )
    return CompileView(
        model=info.model,
        steps=steps,
        graph_error=info.graph_error,
        revision=info.revision,
        generator_revision=generator_rev,
        revision_error=info.revision_error,
        validator=info.validator,
        accuracy=info.accuracy,
        enforcing=info.enforcing,
        cached=info.cached,
        graph_reply=info.graph_reply,
        revision_reply=info.revision_reply,
    )


def episode_view(
    record: EpisodeRecord,
    score: EpisodeScore,
    episode: Episode | None,
) -> EpisodeView:
    """One episode for reading: the header (cell, outcome, tokens, wall time: its
    :func:`episode_row`), every turn (:func:`turn_views`), the compile against the
    generator, the corruption events."""
    return EpisodeView(
        cell=record.cell,
        slug=record.cell.slug(),
        row=episode_row(record, score),
        spec=record.spec,
        synthetic=record.synthetic,
        termination=record.termination,
        error=record.error,
        mismatches=list(score.mismatches),
        refused=score.refused,
        false_completions=score.false_completions,
        citations=score.citations,
        turns=in_sessions(turn_views(record, score), record),
        compile=compile_view(record, episode),
        corruptions=list(record.corruptions),
        label=model_label(record.cell),
        cut={k: v for k, v in cut_replies([record]).get(record.cell, {}).items() if v[1]},
    )


def _outcome_key(turn: TurnView) -> tuple[tuple[tuple[str, str], ...], ...]:
    return (
        tuple(sorted((e.channel, e.step) for e in turn.errors)),
        tuple(sorted((e.channel, e.step) for e in turn.decline_aware_errors)),
    )


def _planned_keys(turns: Sequence[TurnView]) -> list[tuple[int, int]]:
    """(planned position, 0) for a planned turn; (the planned position before it, k >= 1)
    for the k-th dynamic re-ask after it: the key pairs the two arms' turns."""
    keys = []
    planned, extra = -1, 0
    for t in turns:
        if t.dynamic:
            extra += 1
            keys.append((planned, extra))
        else:
            planned, extra = planned + 1, 0
            keys.append((planned, 0))
    return keys


def compare_view(a: EpisodeView, b: EpisodeView) -> CompareView:
    """Two :func:`episode_view` results of one seed side by side: planned turns paired by
    their place in the schedule, dynamic re-asks paired by their place after it (or left
    alone); ``differs`` marks the pairs whose errors (either scoring) are not the same."""
    ka = dict(zip(_planned_keys(a.turns), a.turns, strict=True))
    kb = dict(zip(_planned_keys(b.turns), b.turns, strict=True))
    rows = []
    for key in sorted(ka.keys() | kb.keys()):
        ta, tb = ka.get(key), kb.get(key)
        differs = ta is None or tb is None or _outcome_key(ta) != _outcome_key(tb)
        rows.append(CompareRow(a=ta, b=tb, differs=differs))
    return CompareView(
        seed=a.row.seed,
        a=a.row,
        b=b.row,
        rows=rows,
        differing=sum(r.differs for r in rows),
    )
