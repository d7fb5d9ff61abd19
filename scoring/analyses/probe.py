"""Scoring the trap-turn probe's re-asks (Appendix A.4) and Table 3's shape.

A re-ask's reply is read with the same receipt parser as the run
(:func:`protocol.state.bookings.read_execution`): it re-executes when it books the trap turn's
(done) step with the fresh work order of the request. Under the no-work-order variant the
request carries none; a ref line of the step with a work order that no earlier turn of the
episode carried counts as booking it (the agent made one up). "Said done then booked" (the
Qwen3.6-35B mode): a re-execution whose text before its first booking line says the step is
done (:data:`SAID_DONE`, a regex family of ours, docs/probe.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import msgspec

from protocol.brief import tool_name
from protocol.probe.turns import VARIANTS, ProbeRecord
from protocol.records import Episode
from protocol.state.bookings import read_execution
from protocol.state.receipts import find_actions, find_refs, normalize_work_order
from scoring.results.stats import wilson

__all__ = [
    "SAID_DONE",
    "ProbeGroup",
    "ProbeScore",
    "ProbeTable",
    "VariantRow",
    "figure_probe",
    "probe_groups",
    "probe_table",
    "reask_row",
    "render_probe_groups",
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
    tool = tool_name(episode.step(step)) if tools else None

    def lines(keep: Callable[[str | None], bool]) -> list[int]:
        """Where the reply's booking lines of the step start, for work orders ``keep``
        accepts: its ACTION lines with ``tools``, else its ref lines."""
        if tool is not None:
            return [
                a.start
                for a in find_actions(reply)
                if a.tool == tool and keep(normalize_work_order(a.work_order))
            ]
        return [r.start for r in find_refs(reply) if r.code == code and keep(r.work_order)]

    starts: list[int] = []
    if work_order is not None:
        read = read_execution(reply, episode, work_order, tools=tools)
        booked = any(b.step == step for b in read.bookings)
        if booked:
            starts = lines(lambda wo: wo == work_order)
    else:
        used = set(used_work_orders)
        starts = lines(lambda wo: wo is not None and wo not in used)
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


ReaskRow = tuple[str, str, str, bool, bool, bool]


def reask_row(r: ProbeRecord) -> ReaskRow:
    """What :func:`probe_table` reads of one probe record: (trap key, variant, decoding,
    reexecuted, said_done_then_booked, recorded_rebooked)."""
    return (
        f"{r.episode_id}#{r.turn}",
        r.variant,
        r.decoding,
        r.reexecuted,
        r.said_done_then_booked,
        r.recorded_rebooked,
    )


def probe_table(
    records: Sequence[ReaskRow],
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


class ProbeGroup(msgspec.Struct, frozen=True, kw_only=True):
    """Table 3's shape for the re-asks of one model, arm and harness (the paper's "with
    tools" rows are the ``langgraph`` harness's)."""

    model: str
    arm: str
    harness: str
    table: ProbeTable

    def label(self) -> str:
        where = "with tools (LangGraph harness)" if self.harness != "text" else "text protocol"
        return f"{self.model}, arm {self.arm}, {where}"


def probe_groups(records: Sequence[ProbeRecord]) -> list[ProbeGroup]:
    """One :class:`ProbeGroup` per (model, arm, harness) of ``records``, in first-seen
    order; rows in :data:`protocol.probe.turns.VARIANTS` order."""
    keys = list(dict.fromkeys((r.model, r.arm, r.harness) for r in records))
    out: list[ProbeGroup] = []
    for model, arm, harness in keys:
        mine = [r for r in records if (r.model, r.arm, r.harness) == (model, arm, harness)]
        table = probe_table(
            [reask_row(r) for r in mine],
            variants=[v for v in VARIANTS if any(r.variant == v for r in mine)],
            synthetic=any(r.synthetic for r in mine),
        )
        out.append(ProbeGroup(model=model, arm=arm, harness=harness, table=table))
    return out


def render_probe_groups(groups: Sequence[ProbeGroup]) -> str:
    """Each group's table under a line naming its model, arm and harness."""
    return "\n\n".join(f"## {g.label()}\n{render_probe_table(g.table)}" for g in groups)


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


def figure_probe(groups: Sequence[ProbeGroup]) -> Any:
    """Table 3 as a figure, one panel per group: the sampled re-execution share per variant
    with its Wilson 95% interval (greedy shares as open markers). A
    :class:`matplotlib.figure.Figure` built without pyplot; matplotlib (the ``plots`` extra)
    is imported on first use."""
    from matplotlib.figure import Figure

    heights = [0.45 * len({r.variant for r in g.table.rows}) + 1.0 for g in groups]
    fig = Figure(figsize=(7.5, sum(heights) + 0.6), layout="constrained")
    axes = fig.subplots(len(groups), 1, squeeze=False, height_ratios=heights)[:, 0]
    for ax, g in zip(axes, groups, strict=True):
        _panel(ax, g)
    axes[-1].set_xlabel("share of replies that book the finished step again (Wilson 95%)")
    fig.suptitle("Trap-turn probe (Table 3 shape)", fontsize=10)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2, fontsize=8)
    return fig


def _panel(ax: Any, group: ProbeGroup) -> None:
    table = group.table
    variants = list(dict.fromkeys(r.variant for r in table.rows))
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
    ax.set_yticks(list(ys), variants, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(-0.02, 1.02)
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(group.label() + (" - SYNTHETIC agent" if table.synthetic else ""), fontsize=9)
