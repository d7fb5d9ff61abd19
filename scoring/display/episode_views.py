"""The views ``ladder show`` and ``ladder view`` draw (the Structs of :mod:`scoring.display.models`),
built from a logged record and its score (:func:`scoring.replay.episode_score.score_episode`). Pure; no
scoring rule of its own: every verdict, label and channel here is the replay's.

* :func:`episode_row`: one line of an episode list (outcome under both scorings, channels,
  tokens and helper calls as :mod:`scoring.analyses.cost` counts them, wall time).
* :func:`episode_view`: one episode turn by turn: kind, label under both scorings, the user
  text as sent with the arm's additions apart, the reply, bookings admitted and refused, the
  errors (channel and step; a re-execution with the turn it repeats), the matcher's answer,
  the directive, per-call tokens and latency, the corruption events of the turn; plus the
  compiled graph against the generator's.
* :func:`compare_view`: the same seed under two arms, turn by turn, planned turns paired,
  the turns whose outcome differs marked.
* :func:`filter_rows`: the episode list's filters.

The run's overview (cells, contrasts, a cell's cost) is :mod:`scoring.display.run_overview`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import msgspec

from protocol.arms.askback import Principal, render_escalation
from protocol.arms.render import render_tool_failure
from protocol.config import model_label
from protocol.records import (
    CellKey,
    CorruptionEvent,
    Episode,
    EpisodeRecord,
    Knobs,
    TurnRecord,
)
from protocol.state.machine import sort_ids
from protocol.state.receipts import normalize_code
from protocol.user import STYLE_KINDS
from scoring.analyses.cost import CostRow, cost_rows
from scoring.analyses.truncation import cut_replies
from scoring.display.models import (
    CallView,
    CompareRow,
    CompareView,
    CompileStepView,
    CompileView,
    EpisodeView,
    ErrorView,
    EscalationView,
    HelperCalls,
    RevisionView,
    RowView,
    Tokens,
    TurnView,
)
from scoring.display.sessions_view import in_sessions
from scoring.replay.episode_score import EpisodeScore, Scoring, TurnScore

__all__ = [
    "arm_label",
    "compare_view",
    "compile_view",
    "episode_row",
    "episode_view",
    "filter_rows",
    "pairing_key",
    "sent_parts",
    "turn_views",
]


def pairing_key(key: CellKey) -> CellKey:
    """What cells share when their seeds pair and their costs compare (as in
    :func:`scoring.analyses.cost.cost_rows`' ``x_raw``): every field but the arm and the knobs."""
    return msgspec.structs.replace(key, arm="", knobs=Knobs())


def arm_label(key: CellKey) -> str:
    """The arm with its non-default knobs: ``enforce (corruption=0.02)``."""
    knobs = [f"{f}={v}" for f, v in key.knobs.changed().items()]
    return f"{key.arm} ({', '.join(knobs)})" if knobs else key.arm


def _outcome(score: EpisodeScore, scoring: Scoring) -> bool | None:
    """Success under one scoring; None when the episode is not counted (infra, unscorable)."""
    return scoring.success if score.counted else None


def _nonzero(channels: Mapping[str, int]) -> dict[str, int]:
    return {ch: n for ch, n in channels.items() if n}


def _agent_tokens(record: EpisodeRecord) -> int:
    return sum(
        c.prompt_tokens + c.completion_tokens
        for t in record.turns
        for c in t.calls
        if c.role == "agent" and not c.cached  # no request made for this episode
    )


def _helper_tokens(record: EpisodeRecord) -> int:
    return sum(
        c.prompt_tokens + c.completion_tokens
        for t in record.turns
        for c in t.calls
        if c.role != "agent" and not c.cached
    )


def _helpers(cost: CostRow | None) -> HelperCalls:
    if cost is None:
        return HelperCalls()
    return HelperCalls(
        needed=round(cost.matcher_required + cost.compiler_required),
        made=round(cost.matcher_made + cost.compiler_made),
        cached=round(cost.matcher_cached + cost.compiler_cached),
    )


def episode_row(record: EpisodeRecord, score: EpisodeScore, cost: CostRow | None = None) -> RowView:
    """One row of an episode list: the record's seed and outcome under both scorings; its
    helper calls and tokens as :func:`scoring.analyses.cost.cost_rows` counts them (*cost*, the
    record's one-episode row, computed when not given; an episode that did not complete
    has none and counts its helper requests from its calls)."""
    if cost is None:
        rows = cost_rows([record])
        cost = rows[0] if rows else None
    helper = round(cost.helper_tokens) if cost is not None else _helper_tokens(record)
    return RowView(
        slug=record.cell.slug(),
        arm=arm_label(record.cell),
        seed=record.spec.seed,
        trial=record.trial,
        termination=record.termination,
        counted=score.counted,
        strict=_outcome(score, score.primary),
        decline_aware=_outcome(score, score.decline_aware),
        channels=_nonzero(score.primary.channels),
        decline_aware_channels=_nonzero(score.decline_aware.channels),
        turns=len(record.turns),
        turns_ok=score.primary.turns_ok,
        tokens=Tokens(agent=_agent_tokens(record), helper=helper),
        helpers=_helpers(cost),
        wall_s=record.wall_s,
        corruptions=len(record.corruptions),
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


def sent_parts(turn: TurnRecord) -> list[tuple[str, str]]:
    """The user message as sent, cut into ``("user", text)`` (the scripted user's words) and
    ``("arm", text)`` (what the arm put before or after them: notices, checklist, directive),
    with ``("injected", text)`` after the user's words for the text a stress knob injected
    into the user's message (the spoof knob's forgery, docs/stress.md); the uncooperative
    user's own turns (the user_style knob) are ``("styled", text)`` in place of the user's.
    An old log without ``sent_text`` gives the user text alone."""
    sent = turn.sent_text or turn.user_text
    at = sent.find(turn.user_text) if turn.user_text else -1
    mine = "styled" if turn.kind in STYLE_KINDS else "user"  # the uncooperative user's
    if at < 0:
        return [("arm" if turn.arm_text else "user", sent)]
    rest = sent[at + len(turn.user_text) :]
    injected = ""
    if turn.injected and rest.startswith("\n" + turn.injected):
        injected, rest = turn.injected, rest[len(turn.injected) + 1 :]
    parts = [
        ("arm", sent[:at]),
        (mine, turn.user_text),
        ("injected", injected),
        ("arm", rest),
    ]
    return [(kind, text) for kind, text in parts if text]


def _errors(t: TurnScore | None, executed_at: Mapping[str, int]) -> list[ErrorView]:
    """The turn's errors; a re-execution names the turn that last executed its step."""
    if t is None:
        return []
    return [
        ErrorView(
            channel=e.channel,
            step=e.step,
            original_turn=executed_at.get(e.step) if e.channel == "re_execution" else None,
        )
        for e in t.errors
    ]


def _executed_before(turns: Sequence[TurnScore]) -> dict[int, dict[str, int]]:
    """Per turn index: each step's last executing turn before it."""
    out: dict[int, dict[str, int]] = {}
    last: dict[str, int] = {}
    for t in sorted(turns, key=lambda t: t.index):
        out[t.index] = dict(last)
        last.update(dict.fromkeys(t.executed, t.index))
    return out


def turn_views(record: EpisodeRecord, score: EpisodeScore) -> list[TurnView]:
    """Every logged turn with the replay's verdict on it under both scorings."""
    primary = {t.index: t for t in score.primary.turns}
    aware = {t.index: t for t in score.decline_aware.turns}
    before = _executed_before(score.primary.turns)
    before_aware = _executed_before(score.decline_aware.turns)
    events: dict[int, list[CorruptionEvent]] = {}
    for e in record.corruptions:
        events.setdefault(e.turn, []).append(e)
    out = []
    for t in record.turns:
        p, a = primary.get(t.index), aware.get(t.index)
        out.append(
            TurnView(
                index=t.index,
                kind=t.kind,
                step=t.step,
                work_order=t.work_order,
                dynamic=t.dynamic,
                named=list(t.named),
                label=p.label if p else None,
                decline_aware_label=a.label if a else None,
                executed=list(p.executed) if p else [],
                errors=_errors(p, before.get(t.index, {})),
                decline_aware_errors=_errors(a, before_aware.get(t.index, {})),
                failed=bool(p and p.errors),
                failed_decline_aware=bool(a and a.errors),
                user_text=t.user_text,
                arm_text=t.arm_text,
                sent=sent_parts(t),
                reply=t.reply,
                reasoning=t.reasoning,
                first_reply=t.first_reply,
                retry_notices=list(t.retry_notices),
                admitted=list(t.admitted),
                refused=list(t.refused),
                matched_step=t.matched_step,
                matched_redo=t.matched_redo,
                matcher_outcome=t.matcher_outcome,
                matcher_replies=list(t.matcher_replies),
                directive=t.directive,
                calls=[CallView(call=c, latency_s=c.wait_s + c.server_s) for c in t.calls],
                corruptions=events.get(t.index, []),
                tool_failures=[
                    render_tool_failure(
                        c.tool,
                        c.work_order,
                        c.status or "transient",
                        record.cell.knobs.tool_failure_landed > 0,
                    )
                    for c in t.tool_calls
                    if c.outcome == "failed"
                ],
                question=t.question,
                answer=t.answer,
                ask_reason=t.ask_reason,
                first_match=t.first_match,
                escalations=[
                    EscalationView(
                        booking=e.booking,
                        status=e.status,
                        step=e.step,
                        text=render_escalation(e.booking, e.status, e.step),
                        answer=Principal.answer_text(e.confirmed),
                        override=e.confirmed,
                    )
                    for e in t.escalations
                ],
            )
        )
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
    cost: CostRow | None = None,
) -> EpisodeView:
    """One episode for reading: the header (cell, outcome, tokens, wall time; *cost* as for
    :func:`episode_row`), every turn (:func:`turn_views`), the compile against the
    generator, the corruption events."""
    return EpisodeView(
        cell=record.cell,
        slug=record.cell.slug(),
        row=episode_row(record, score, cost),
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
