"""The ``ladder cost`` tables: per configuration, Table 7's columns and the latency. Pure.

For each configuration (every cell-key field but the arm, non-default knobs named), one
table of tokens and calls per episode and one of latency, arms in ladder order.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from scoring.analyses.cost import CostRow, HelperSpend, Latency
from scoring.report.tables import WIDE, Labels, text_table
from scoring.results.cells import config_of

__all__ = [
    "BURDEN_HEADER",
    "COST_HEADER",
    "LATENCY_HEADER",
    "SPEND_HEADER",
    "cost_table",
    "spend_table",
]

COST_HEADER = (
    "arm",
    "n",
    "prompt k",
    "compl. k",
    "total k",
    "x raw",
    "cached k",
    "agent calls",
    "re-asks",
    "matcher calls needed (made/cached)",
    "compiler calls needed (made/cached)",
    "helper tok k needed (made)",
    "rejected/128",
    "memory / embed calls",
)
SPEND_HEADER = (
    "helper",
    "needed calls",
    "needed tok k",
    "spent calls",
    "spent tok k",
    "saved by sharing tok k",
    "spent from",
)
LATENCY_HEADER = (
    "arm",
    "n",
    "episode s mean/p50/p95",
    "agent server s p50/p95/p99",
    "slot wait s p50/p95/p99",
    "compl. tok/s",
)


BURDEN_HEADER = (
    "arm",
    "n",
    "questions/ep",
    "escalations/ep",
    "overrides",
    "readings recovered",
    "asks per recovery",
    "extra matcher calls/ep",
    "extra tok/ep",
    "extra s/ep",
)


def _k(x: float, digits: int = 1) -> str:
    return f"{x / 1000:.{digits}f}"


def _req(required: float, made: float, cached: float) -> str:
    return "-" if required == 0 and made == 0 else f"{required:.1f} ({made:.1f}/{cached:.1f})"


def _mean_p50_p95(lat: Latency) -> str:
    return f"{lat.mean:.2f}/{lat.p50:.2f}/{lat.p95:.2f}"


def _p50_p95_p99(lat: Latency) -> str:
    return f"{lat.p50:.3f}/{lat.p95:.3f}/{lat.p99:.3f}"


def _cost_cells(r: CostRow) -> list[str]:
    return [
        r.cell.arm + (" [gate inert]" if r.gate_inert else ""),
        str(r.n),
        _k(r.prompt_tokens),
        _k(r.completion_tokens, 2),
        _k(r.total_tokens),
        "-" if r.x_raw is None else f"{r.x_raw:.2f}",
        "not reported" if r.cached_tokens is None else _k(r.cached_tokens),
        f"{r.agent_calls:.1f}",
        f"{r.re_asks:.2f}",
        _req(r.matcher_required, r.matcher_made, r.matcher_cached),
        _req(r.compiler_required, r.compiler_made, r.compiler_cached),
        "-"
        if not (r.helper_tokens or r.helper_tokens_made)
        else f"{_k(r.helper_tokens, 2)} ({_k(r.helper_tokens_made, 2)})",
        f"{r.rejected_per_128:.1f}",
        "-"
        if not (r.memory_calls or r.embedding_calls)
        else (f"{r.memory_calls:.1f} / {r.embedding_calls:.1f}"),
    ]


def _latency_cells(r: CostRow) -> list[str]:
    tps = r.completion_tokens_per_s
    return [
        r.cell.arm,
        str(r.n),
        _mean_p50_p95(r.wall_s),
        _p50_p95_p99(r.server_s),
        _p50_p95_p99(r.wait_s),
        "-" if tps is None else f"{tps:,.0f}",
    ]


def _burden_cells(r: CostRow) -> list[str]:
    b, n = r.askback, max(1, r.n)
    assert b is not None
    return [
        r.cell.arm,
        str(r.n),
        f"{b.questions / n:.2f}",
        f"{b.escalations / n:.2f}",
        str(b.overrides),
        str(b.recovered),
        f"{b.asked / b.recoveries:.1f}" if b.recoveries else "-",
        f"{b.extra_matcher_calls / n:.2f}",
        f"{b.extra_tokens / n:,.0f}",
        f"{b.extra_s / n:.3f}",
    ]


# At 80 columns (#40): the cost columns in three tables and the latency's in two, under
# short heads; each group's indices into COST_HEADER / LATENCY_HEADER and its heads.
_COST_GROUPS: tuple[tuple[tuple[int, ...], tuple[str, ...]], ...] = (
    ((0, 1, 2, 3, 4, 5, 6), ("arm", "n", "prompt k", "compl. k", "total k", "x raw", "cached k")),
    ((0, 7, 8, 12, 13), ("arm", "agent calls", "re-asks", "rejected/128", "memory / embed")),
    ((0, 9, 10, 11), ("arm", "matcher (made/cached)", "compiler (made/cached)", "helper k (made)")),
)
_LATENCY_GROUPS: tuple[tuple[tuple[int, ...], tuple[str, ...]], ...] = (
    ((0, 1, 2, 5), ("arm", "n", "episode s mean/p50/p95", "compl. tok/s")),
    ((0, 3, 4), ("arm", "server s p50/p95/p99", "slot wait s p50/p95/p99")),
)


_BURDEN_GROUPS: tuple[tuple[tuple[int, ...], tuple[str, ...]], ...] = (
    ((0, 1, 2, 3, 4, 5, 6), ("arm", "n", "asks/ep", "escal./ep", "overrides", "recovered",
                             "asks/recovery")),
    ((0, 7, 8, 9), ("arm", "extra matcher calls/ep", "extra tok/ep", "extra s/ep")),
)  # fmt: skip


def _tables(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    groups: Sequence[tuple[tuple[int, ...], tuple[str, ...]]],
    wide: bool,
) -> list[str]:
    if wide:
        return [text_table(header, rows), ""]
    out: list[str] = []
    for cols, heads in groups:
        out += [text_table(heads, [[r[i] for i in cols] for r in rows]), ""]
    return out


def cost_table(rows: Sequence[CostRow], labels: Labels = WIDE) -> str:
    """Every configuration of *rows* (in the ladder's order): a heading, then the tables
    (``labels`` numbered: within 80 columns, with their legend first)."""
    configs: dict[object, list[CostRow]] = {}
    for r in sorted(rows, key=lambda r: labels.order(r.cell)):
        configs.setdefault(config_of(r.cell), []).append(r)
    legend = labels.legend()
    parts: list[str] = [legend, ""] if legend else []
    for members in configs.values():
        parts.append(f"Cost per episode: {labels(members[0].cell)}")
        cost = [_cost_cells(r) for r in members]
        parts += _tables(COST_HEADER, cost, _COST_GROUPS, labels.wide)
        if inert := [f"  {r.cell.arm}: {r.gate_inert}" for r in members if r.gate_inert]:
            parts[-1:-1] = inert  # under the cost tables, before their blank line
        if handed := [_handed(r) for r in members if r.next_model]:
            parts[-1:-1] = handed  # next_model's sessions, counted to it (#48)
        latency = [_latency_cells(r) for r in members]
        parts += _tables(LATENCY_HEADER, latency, _LATENCY_GROUPS, labels.wide)
        asked = [r for r in members if r.askback is not None]
        if asked:  # the ask-back knobs (issue #38): what the gate asked of the user
            head = "The user's burden (show / ask / escalate; docs/askback.md)"
            burden = [_burden_cells(r) for r in asked]
            if labels.wide:
                parts += [head, text_table(BURDEN_HEADER, burden), ""]
            else:  # 80 columns: the questions, then the extra cost
                parts += [head, *_tables(BURDEN_HEADER, burden, _BURDEN_GROUPS, False)]
    return "\n".join(parts).rstrip()


def _handed(r: CostRow) -> str:
    """The other model's share of a handoff-between-agents cell (not in its row)."""
    tokens = r.next_model_prompt_tokens + r.next_model_completion_tokens
    line = (
        f"  {r.cell.arm}: next_model {r.next_model} made {r.next_model_calls:.1f} agent calls, "
        f"{_k(tokens)}k tokens per episode (counted to it, not in the row)"
    )
    return "\n".join(textwrap.wrap(line, 80, subsequent_indent="    "))


_NARROW_SPEND = ("helper", "needed", "needed k", "spent", "spent k", "saved k", "from")


def spend_table(spend: Sequence[HelperSpend], wide: bool = True) -> str:
    """The grid's helper spend: what every arm needed in all (the per-arm tables' helper
    columns summed over episodes) against the requests actually made, each once."""
    rows = [
        [
            h.helper,
            str(h.needed_calls),
            _k(h.needed_tokens),
            str(h.spent_calls),
            _k(h.spent_tokens),
            _k(h.saved_tokens),
            h.source,
        ]
        for h in spend
    ]
    head = "Helper spend for the grid, with sharing (each request once)"
    if not wide:  # 80 columns: calls and tokens (k) needed, spent, saved by sharing
        return head + "\n" + text_table(_NARROW_SPEND, rows)
    return head + "\n" + text_table(SPEND_HEADER, rows)
