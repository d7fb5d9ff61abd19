"""Scoring the trap-turn probe's re-asks (Appendix A.4) and Table 3's shape.

A re-ask's reply is read with the same receipt parser as the run
(:func:`protocol.execution.read_execution`): it re-executes when it books the trap turn's
(done) step with the fresh work order of the request. Under the no-work-order variant the
request carries none; a ref line of the step with a work order that no earlier turn of the
episode carried counts as booking it (the agent made one up). "Said done then booked" (the
Qwen3.6-35B mode): a re-execution whose text before its first booking line says the step is
done (:data:`SAID_DONE`, a regex family of ours, docs/probe.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from protocol.execution import read_execution
from protocol.receipts import find_actions, find_refs
from protocol.records import Episode
from scoring.stats import wilson

__all__ = [
    "SAID_DONE",
    "ProbeScore",
    "ProbeTable",
    "VariantRow",
    "figure_probe",
    "probe_table",
    "render_probe_table",
    "said_done",
    "score_reask",
]

# OURS: a reply says the step is done. Matched case-insensitively on the text before the
# first booking line; phrasings seen in the paper's quotes ("the step is already done",
# "s5 is complete") and their near forms.
SAID_DONE: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\balready\s+(?:been\s+)?(?:done|complete[d]?|finished|booked|performed|carried out)\b",
        r"\b(?:is|was|are|were)\s+(?:already\s+)?(?:done|complete[d]?|finished)\b",
        r"\bha(?:s|ve)\s+(?:already\s+)?been\s+(?:done|completed|finished|booked|performed|carried out)\b",
        r"\bno\s+new\s+work\s+order\b",
    )
)


def said_done(text: str) -> bool:
    return any(p.search(text) for p in SAID_DONE)


class ProbeScore(msgspec.Struct, frozen=True, kw_only=True):
    reexecuted: bool  # booked the trap's step with the request's work order
    said_done: bool  # the text before the first booking line (all of it if none) says done
    said_done_then_booked: bool


def score_reask(
    reply: str,
    episode: Episode,
    step: str | None,
    work_order: str | None,
    *,
    tools: bool = False,
    used_work_orders: Iterable[str] = (),
) -> ProbeScore:
    """Score one re-ask reply. ``work_order``: the request's (None under no-work-order,
    where a booking of the step under a work order not in ``used_work_orders`` counts)."""
    if step is None:
        return ProbeScore(reexecuted=False, said_done=False, said_done_then_booked=False)
    code = episode.step(step).code
    starts: list[int] = []
    if work_order is not None:
        read = read_execution(reply, episode, work_order, tools=tools)
        booked = any(b.step == step for b in read.bookings)
        if booked:
            starts = [
                r.start for r in find_refs(reply) if r.code == code and r.work_order == work_order
            ]
            starts += [a.start for a in find_actions(reply) if a.work_order == work_order]
    else:
        used = set(used_work_orders)
        starts = [r.start for r in find_refs(reply) if r.code == code and r.work_order not in used]
        booked = bool(starts)
    head = reply[: min(starts)] if starts else reply
    done = said_done(head)
    return ProbeScore(reexecuted=booked, said_done=done, said_done_then_booked=booked and done)


class VariantRow(msgspec.Struct, frozen=True, kw_only=True):
    variant: str
    decoding: str  # "sampled" (Table 3's shares) or "greedy"
    n: int  # replies
    reexecuted: int
    share: float
    ci: tuple[float, float]  # Wilson 95%
    said_done_then_booked: int
    traps: int  # distinct trap turns


class ProbeTable(msgspec.Struct, frozen=True, kw_only=True):
    rows: tuple[VariantRow, ...]
    # greedy re-ask of the recorded request against the recorded outcome
    greedy_traps: int
    greedy_reproduced: int
    greedy_reproduction: float | None
    synthetic: bool = False


class _Reask(msgspec.Struct, frozen=True, kw_only=True):
    """What :func:`probe_table` reads of a probe record (duck-typed on the runner's)."""

    trap: str
    variant: str
    decoding: str
    reexecuted: bool
    said_done_then_booked: bool
    recorded_rebooked: bool


def probe_table(
    records: Sequence[tuple[str, str, str, bool, bool, bool]],
    *,
    variants: Sequence[str] = (),
    synthetic: bool = False,
) -> ProbeTable:
    """Table 3's shape from (trap key, variant, decoding, reexecuted, said_done_then_booked,
    recorded_rebooked) tuples, one per re-ask."""
    reasks = [
        _Reask(
            trap=r[0],
            variant=r[1],
            decoding=r[2],
            reexecuted=r[3],
            said_done_then_booked=r[4],
            recorded_rebooked=r[5],
        )
        for r in records
    ]
    order = list(variants) or list(dict.fromkeys(r.variant for r in reasks))
    rows: list[VariantRow] = []
    for decoding in ("sampled", "greedy"):
        for v in order:
            sel = [r for r in reasks if r.variant == v and r.decoding == decoding]
            if not sel:
                continue
            k = sum(r.reexecuted for r in sel)
            rows.append(
                VariantRow(
                    variant=v,
                    decoding=decoding,
                    n=len(sel),
                    reexecuted=k,
                    share=k / len(sel),
                    ci=wilson(k, len(sel)),
                    said_done_then_booked=sum(r.said_done_then_booked for r in sel),
                    traps=len({r.trap for r in sel}),
                )
            )
    greedy = {r.trap: r for r in reasks if r.variant == "as_recorded" and r.decoding == "greedy"}
    same = sum(r.reexecuted == r.recorded_rebooked for r in greedy.values())
    return ProbeTable(
        rows=tuple(rows),
        greedy_traps=len(greedy),
        greedy_reproduced=same,
        greedy_reproduction=same / len(greedy) if greedy else None,
        synthetic=synthetic,
    )


def render_probe_table(table: ProbeTable) -> str:
    """Table 3's shape as text: the re-execution share per variant (Wilson 95%), sampled
    rows first, then the greedy re-asks, and the greedy reproduction rate."""
    head = (
        "Trap-turn probe (Appendix A.4, Table 3 shape): share of replies that book the "
        "finished step again"
    )
    lines = [head + (" [SYNTHETIC agent: a test instrument]" if table.synthetic else "")]
    lines.append(
        f"{'variant':<18} {'decoding':<8} {'traps':>6} {'replies':>8} {'re-exec':>8} "
        f"{'share':>6}  {'95% CI':<13} {'said done, booked':>17}"
    )
    for r in table.rows:
        ci = f"[{r.ci[0]:.2f}, {r.ci[1]:.2f}]"
        lines.append(
            f"{r.variant:<18} {r.decoding:<8} {r.traps:>6} {r.n:>8} {r.reexecuted:>8} "
            f"{r.share:>6.2f}  {ci:<13} {r.said_done_then_booked:>17}"
        )
    if table.greedy_reproduction is not None:
        lines.append(
            f"greedy re-ask of the recorded request reproduces the recorded outcome at "
            f"{table.greedy_reproduced}/{table.greedy_traps} trap turns "
            f"({table.greedy_reproduction:.2f}; the paper: >= 0.90)"
        )
    return "\n".join(lines)


def figure_probe(table: ProbeTable) -> Any:
    """Table 3 as a figure: the sampled re-execution share per variant with its Wilson 95%
    interval (greedy shares as open markers). A :class:`matplotlib.figure.Figure` built
    without pyplot; matplotlib (the ``plots`` extra) is imported on first use."""
    from matplotlib.figure import Figure

    variants = list(dict.fromkeys(r.variant for r in table.rows))
    fig = Figure(figsize=(7.0, 0.45 * len(variants) + 1.4), layout="constrained")
    ax = fig.add_subplot()
    ys = range(len(variants))
    for decoding, marker, fill in (("sampled", "o", "C0"), ("greedy", "D", "none")):
        rows = {r.variant: r for r in table.rows if r.decoding == decoding}
        pts = [(y, rows[v]) for y, v in zip(ys, variants, strict=True) if v in rows]
        if not pts:
            continue
        off = -0.12 if decoding == "sampled" else 0.12
        ax.errorbar(
            [r.share for _, r in pts],
            [y + off for y, _ in pts],
            xerr=[
                [r.share - r.ci[0] for _, r in pts],
                [r.ci[1] - r.share for _, r in pts],
            ],
            fmt=marker,
            mfc=fill,
            color="C0" if decoding == "sampled" else "C1",
            capsize=3,
            label=decoding,
        )
    ax.set_yticks(list(ys), variants)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of replies that book the finished step again (Wilson 95%)")
    title = "Trap-turn probe (Table 3 shape)"
    ax.set_title(title + (" - SYNTHETIC agent" if table.synthetic else ""))
    fig.legend(loc="outside right upper")
    return fig
