"""The data ``ladder show`` and ``ladder view`` draw: plain JSON-able dicts built from a
logged record and its score (:func:`scoring.replay.score_episode`). Pure; no scoring rule of
its own: every verdict, label and channel here is the replay's.

* :func:`episode_row`: one line of an episode list (outcome under both scorings, channels,
  tokens, wall time) from a compact score and its record.
* :func:`episode_view`: one episode turn by turn: kind, label under both scorings, the user
  text as sent with the arm's additions apart, the reply, bookings admitted and refused, the
  errors (channel and step), the matcher's answer, the directive, per-call tokens and latency,
  the corruption events of the turn; plus the compiled graph against the generator's.
* :func:`compare_view`: the same seed under two arms, turn by turn, planned turns paired,
  the turns whose outcome differs marked.
* :func:`filter_rows`, :func:`cell_cost`: the episode list's filters; a cell's cost from its
  episodes' one-episode :func:`scoring.cost.cost_rows` rows.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from protocol.receipts import normalize_code
from protocol.records import (
    Booking,
    CallRecord,
    CellKey,
    Episode,
    EpisodeRecord,
    Knobs,
    TurnRecord,
)
from protocol.state import sort_ids
from scoring.cells import cell_json
from scoring.replay import EpisodeScore, Scoring, TurnScore
from scoring.tables import config_label

__all__ = [
    "arm_label",
    "cell_cost",
    "cells_view",
    "compare_view",
    "compile_view",
    "episode_row",
    "episode_view",
    "filter_rows",
    "pairing_key",
    "sent_parts",
    "turn_views",
]

View = dict[str, Any]
COST_FIELDS: tuple[str, ...] = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "helper_tokens",
    "agent_calls",
    "helper_calls",
    "helper_calls_cached",
)


def pairing_key(key: CellKey) -> CellKey:
    """What cells share when their seeds pair and their costs compare (as in
    :func:`scoring.cost.cost_rows`' ``x_raw``): every field but the arm and the knobs."""
    return msgspec.structs.replace(key, arm="", knobs=Knobs())


def arm_label(key: CellKey) -> str:
    """The arm with its non-default knobs: ``enforce (corruption=0.02)``."""
    default = Knobs()
    knobs = [
        f"{f}={getattr(key.knobs, f)}"
        for f in Knobs.__struct_fields__
        if getattr(key.knobs, f) != getattr(default, f)
    ]
    return f"{key.arm} ({', '.join(knobs)})" if knobs else key.arm


def _outcome(score: EpisodeScore, scoring: Scoring) -> bool | None:
    """Success under one scoring; None when the episode is not counted (infra, unscorable)."""
    return scoring.success if score.counted else None


def _plain(x: object) -> Any:
    """A record as JSON data (lists, not tuples), as the page receives it."""
    return msgspec.json.decode(msgspec.json.encode(x))


def _nonzero(channels: Mapping[str, int]) -> dict[str, int]:
    return {ch: n for ch, n in channels.items() if n}


def _tokens(record: EpisodeRecord) -> dict[str, int]:
    agent = helper = 0
    for t in record.turns:
        for c in t.calls:
            if c.cached:  # no request made for this episode (as scoring.cost counts)
                continue
            n = c.prompt_tokens + c.completion_tokens
            if c.role == "agent":
                agent += n
            else:
                helper += n
    return {"agent": agent, "helper": helper}


def episode_row(record: EpisodeRecord, score: EpisodeScore) -> View:
    """One row of an episode list: the record's seed and outcome under both scorings."""
    return {
        "slug": record.cell.slug(),
        "arm": arm_label(record.cell),
        "seed": record.spec.seed,
        "termination": record.termination,
        "counted": score.counted,
        "strict": _outcome(score, score.primary),
        "decline_aware": _outcome(score, score.decline_aware),
        "channels": _nonzero(score.primary.channels),
        "decline_aware_channels": _nonzero(score.decline_aware.channels),
        "turns": len(record.turns),
        "turns_ok": score.primary.turns_ok,
        "tokens": _tokens(record),
        "wall_s": record.wall_s,
        "corruptions": len(record.corruptions),
        "refused": score.refused,
        "mismatches": len(score.mismatches),
    }


def filter_rows(
    rows: Iterable[Mapping[str, Any]],
    *,
    failed: str | None = None,
    channel: str | None = None,
    seed: int | None = None,
) -> list[Mapping[str, Any]]:
    """Rows kept by the list's filters. ``failed`` names a scoring (``strict`` or
    ``decline_aware``): only episodes that are not a success under it (infrastructure errors
    included); ``channel``: episodes with an error in that channel (primary scoring)."""
    out = []
    for r in rows:
        if failed and r[failed] is True:
            continue
        if channel and not r["channels"].get(channel):
            continue
        if seed is not None and r["seed"] != seed:
            continue
        out.append(r)
    return out


def cell_cost(rows: Sequence[Mapping[str, Any]]) -> View:
    """A cell's cost from the one-episode rows of :func:`scoring.cost.cost_rows` (one row
    per completed episode): the per-episode means are the means of the rows; the episode
    latency median is the median of the episodes'."""
    if not rows:
        return {"n": 0}
    out: View = {"n": len(rows)}
    for f in COST_FIELDS:
        out[f] = statistics.fmean(r[f] for r in rows)
    out["episode_latency_median_s"] = statistics.median(
        r["episode_latency_s"]["median"] for r in rows
    )
    return out


def cells_view(
    lines: Sequence[Mapping[str, Any]], costs: Mapping[str, Sequence[Mapping[str, Any]]]
) -> list[View]:
    """The run's cells for the overview: each cell line of :func:`scoring.cells.score_lines`
    with its configuration's label and its cost (:func:`cell_cost` over the cell's
    one-episode cost rows, ``costs`` keyed by slug); ``x_raw`` is the cell's mean agent tokens
    per episode over the raw cell's of the same configuration, knobs aside (None without one)."""
    out: list[View] = []
    raw: dict[CellKey, float] = {}
    for line in lines:
        if line.get("type") != "cell":
            continue
        key = msgspec.convert(line["cell"], CellKey)
        cost = cell_cost(costs.get(line["slug"], ()))
        if key.arm == "raw" and cost.get("total_tokens"):
            raw[pairing_key(key)] = cost["total_tokens"]
        label = {"config": config_label(line["cell"]), "arm_label": arm_label(key)}
        out.append({**line, **label, "cost": cost, "_key": key})
    for cell in out:
        base = raw.get(pairing_key(cell.pop("_key")))
        total = cell["cost"].get("total_tokens")
        cell["cost"]["x_raw"] = total / base if base and total is not None else None
    return out


def sent_parts(turn: TurnRecord) -> list[tuple[str, str]]:
    """The user message as sent, cut into ``("user", text)`` (the scripted user's words) and
    ``("arm", text)`` (what the arm put before or after them: notices, checklist, directive).
    An old log without ``sent_text`` gives the user text alone."""
    sent = turn.sent_text or turn.user_text
    at = sent.find(turn.user_text) if turn.user_text else -1
    if at < 0:
        return [("arm" if turn.arm_text else "user", sent)]
    parts = [
        ("arm", sent[:at]),
        ("user", turn.user_text),
        ("arm", sent[at + len(turn.user_text) :]),
    ]
    return [(kind, text) for kind, text in parts if text]


def _booking(b: Booking) -> View:
    return {"step": b.step, "code": b.code, "work_order": b.work_order}


def _call(c: CallRecord) -> View:
    return {**msgspec.structs.asdict(c), "latency_s": c.wait_s + c.server_s}


def _errors(t: TurnScore | None) -> list[View]:
    return [] if t is None else [{"channel": e.channel, "step": e.step} for e in t.errors]


def turn_views(record: EpisodeRecord, score: EpisodeScore) -> list[View]:
    """Every logged turn with the replay's verdict on it under both scorings."""
    primary = {t.index: t for t in score.primary.turns}
    aware = {t.index: t for t in score.decline_aware.turns}
    events: dict[int, list[View]] = {}
    for e in record.corruptions:
        events.setdefault(e.turn, []).append(_plain(e))
    out = []
    for t in record.turns:
        p, a = primary.get(t.index), aware.get(t.index)
        out.append(
            {
                "index": t.index,
                "kind": t.kind,
                "step": t.step,
                "work_order": t.work_order,
                "dynamic": t.dynamic,
                "named": list(t.named),
                "label": p.label if p else None,
                "decline_aware_label": a.label if a else None,
                "executed": list(p.executed) if p else [],
                "errors": _errors(p),
                "decline_aware_errors": _errors(a),
                "failed": bool(p and p.errors),
                "failed_decline_aware": bool(a and a.errors),
                "user_text": t.user_text,
                "arm_text": t.arm_text,
                "sent": [list(part) for part in sent_parts(t)],
                "reply": t.reply,
                "reasoning": t.reasoning,
                "first_reply": t.first_reply,
                "admitted": [_booking(b) for b in t.admitted],
                "refused": [_booking(b) for b in t.refused],
                "matched_step": t.matched_step,
                "matched_redo": t.matched_redo,
                "matcher_outcome": t.matcher_outcome,
                "directive": t.directive,
                "calls": [_call(c) for c in t.calls],
                "corruptions": events.get(t.index, []),
            }
        )
    return out


def compile_view(record: EpisodeRecord, episode: Episode | None) -> View | None:
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
            {
                "step": sid,
                "generator_deps": g_deps,
                "compiled_deps": c_deps,
                "generator_code": g.code if g else None,
                "compiled_code": c.code if c else None,
                "deps_differ": g_deps is None or c_deps is None or set(g_deps) != set(c_deps),
                "code_differs": g is None or c is None or normalize_code(c.code) != g.code,
            }
        )
    generator_rev: View | None = None
    if episode is not None:
        r = episode.revision
        generator_rev = {
            "cancel": r.cancel,
            "rewires": {k: list(v) for k, v in r.rewires.items()},
            "relax": list(r.relax) if r.relax else None,
        }
    return {
        "model": info.model,
        "steps": steps,
        "graph_error": info.graph_error,
        "revision": _plain(info.revision),
        "generator_revision": generator_rev,
        "revision_error": info.revision_error,
        "validator": _plain(info.validator),
        "accuracy": _plain(info.accuracy),
        "enforcing": info.enforcing,
        "cached": info.cached,
    }


def episode_view(record: EpisodeRecord, score: EpisodeScore, episode: Episode | None) -> View:
    """One episode for reading: the header (cell, outcome, tokens, wall time), every turn
    (:func:`turn_views`), the compile against the generator, the corruption events."""
    return {
        "cell": cell_json(record.cell),
        "slug": record.cell.slug(),
        "row": episode_row(record, score),
        "spec": msgspec.structs.asdict(record.spec),
        "synthetic": record.synthetic,
        "termination": record.termination,
        "error": record.error,
        "mismatches": list(score.mismatches),
        "refused": score.refused,
        "false_completions": score.false_completions,
        "citations": score.citations,
        "turns": turn_views(record, score),
        "compile": compile_view(record, episode),
        "corruptions": [_plain(e) for e in record.corruptions],
    }


def _outcome_key(turn: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        tuple(sorted((e["channel"], e["step"]) for e in turn["errors"])),
        tuple(sorted((e["channel"], e["step"]) for e in turn["decline_aware_errors"])),
    )


def _planned_keys(turns: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """(planned position, 0) for a planned turn; (the planned position before it, k >= 1)
    for the k-th dynamic re-ask after it: the key pairs the two arms' turns."""
    keys = []
    planned, extra = -1, 0
    for t in turns:
        if t["dynamic"]:
            extra += 1
            keys.append((planned, extra))
        else:
            planned, extra = planned + 1, 0
            keys.append((planned, 0))
    return keys


def compare_view(a: Mapping[str, Any], b: Mapping[str, Any]) -> View:
    """Two :func:`episode_view` results of one seed side by side: planned turns paired by
    their place in the schedule, dynamic re-asks paired by their place after it (or left
    alone); ``differs`` marks the pairs whose errors (either scoring) are not the same."""
    ka = dict(zip(_planned_keys(a["turns"]), a["turns"], strict=True))
    kb = dict(zip(_planned_keys(b["turns"]), b["turns"], strict=True))
    rows = []
    for key in sorted(ka.keys() | kb.keys()):
        ta, tb = ka.get(key), kb.get(key)
        differs = ta is None or tb is None or _outcome_key(ta) != _outcome_key(tb)
        rows.append({"a": ta, "b": tb, "differs": differs})
    return {
        "seed": a["row"]["seed"],
        "a": {k: v for k, v in a.items() if k != "turns"},
        "b": {k: v for k, v in b.items() if k != "turns"},
        "rows": rows,
        "differing": sum(r["differs"] for r in rows),
    }
