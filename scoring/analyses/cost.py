"""Per-arm cost in the paper's Table 7 shape, computed from logged call records. Pure.

One :class:`CostRow` per cell (every cell-key field, knobs included, is part of the row's
key), over the episodes that completed (an infrastructure failure has no full cost):

* Agent tokens per episode (prompt, completion, total: the agent's calls only, as in
  Table 7), the prompt tokens the server served from its prefix cache (``cached_tokens``,
  None, "not reported", where no agent call's usage carried them: llama.cpp reuses most of
  a prompt and reports none of it), and the total as a multiple of the raw arm of the
  same configuration (``x_raw``; a variant cell, whose knobs the raw arm does not run, is
  compared with the raw cell of the same configuration at default knobs; None without one).
* Agent calls per episode (one per scripted turn, a re-ask turn and a same-turn notice's
  retry included) and the re-ask turns apart.
* Helper calls each arm REQUIRES per episode, matcher and compiler apart, in one unit, calls:
  the matcher's calls behind each turn it consulted (Table 7: one per non-filler,
  non-revision turn; a malformed reply's correction request is one more, made or served:
  a served answer's records are those of every request that made it), the compiler two per
  compile (graph and revision); the matcher's answers (turns consulted) are
  ``matcher_answers``. A call another cell's episode made for the same key (the
  directive, enforcement and hybrid arms of one seed share every matcher answer and the
  compile) is still required by this arm; it is counted once as required and then as *made*
  (a request this episode sent; a malformed matcher reply's correction request counts as one
  more made) or *cached* (served without a request: memory, disk, another episode's call in
  flight, or the run's precompile batch). So the required counts do not depend on which arm
  happened to run first. Helper tokens are those the arm needs: a served call's record keeps
  the tokens of the request that made it (``shared``), so each arm is charged what it would
  cost run alone (Table 7's view); ``helper_tokens_made`` are those of the requests this
  cell's episodes sent themselves.
* The grid's actual helper spend with sharing (:func:`helper_spend`): the requests in the
  run's helper log, once each, beside what the arms needed in all; the difference is what
  sharing saved.
* Rejected bookings per 128 episodes (the gates' refusals).
* The user's burden under the ask-back knobs (issue #38, :mod:`scoring.replay.askback`):
  questions, escalations, overrides, readings recovered, and the matcher requests the
  questions added with their tokens and time (they are in the matcher columns too).
* A handoff between agents (the sessions knob's ``next_model``, issue #48): the agent columns
  count the cell model's calls alone; the other model's (the sessions it ran, and the notes
  closing them) are counted to it apart (``next_model_*``; :mod:`scoring.analyses.handed`).
* Latency: episode wall time (mean, p50, p95), agent-call server time and slot wait (p50,
  p95, p99, over agent calls), agent completion tokens per second of server time.

Quantiles interpolate linearly between order statistics (DuckDB's ``quantile_cont``).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence

import msgspec

from protocol.records import CallRecord, CellKey, EpisodeRecord, HelperLogLine, Knobs
from scoring.analyses.handed import agent_calls
from scoring.replay.askback import Burden, burden_of
from scoring.results.cells import cell_sort_key, config_of
from scoring.results.gate_report import gate_activity

__all__ = ["CostRow", "HelperSpend", "Latency", "cost_rows", "helper_spend", "quantile"]

HELPERS = ("compiler", "matcher")  # the helpers one call may serve several episodes


class Latency(msgspec.Struct, frozen=True, kw_only=True):
    """Seconds: the mean and three quantiles of one distribution."""

    mean: float = 0.0
    p50: float = 0.0
    p95: float = 0.0
    p99: float = 0.0


class CostRow(msgspec.Struct, frozen=True, kw_only=True):
    """One cell's cost per episode (means over its completed episodes)."""

    cell: CellKey
    slug: str
    n: int  # completed episodes
    prompt_tokens: float
    completion_tokens: float
    total_tokens: float
    # of prompt_tokens, served from the server's prefix cache; None: not reported by the
    # server (no agent call's usage carried it), never shown as 0
    cached_tokens: float | None
    uncached_tokens: float | None  # prompt_tokens - cached_tokens (None: not reported)
    x_raw: float | None  # total_tokens / the raw arm's of the same configuration
    agent_calls: float
    re_asks: float  # re-ask turns (the scripted user's dynamic turns)
    matcher_required: float  # matcher calls the arm needs: made + served (one unit: calls)
    matcher_made: float
    matcher_cached: float
    compiler_required: float
    compiler_made: float
    compiler_cached: float
    helper_tokens: float  # prompt + completion of the helper calls the arm needs
    rejected_per_128: float
    # The memory arms' helper requests per episode (Appendix F): mem0's extraction calls
    # and embedding requests, made (cached ones made no request)
    memory_calls: float = 0.0
    embedding_calls: float = 0.0
    helper_tokens_made: float = 0.0  # of helper_tokens, those of requests these episodes sent
    # turns the arm consulted the matcher on (answers needed); matcher_required counts the
    # calls behind them, a malformed reply's correction request included
    matcher_answers: float = 0.0
    # why the cell's gate was inert (scoring.results.gate_report.gate_activity), None when
    # it acted or the arm has no gate: its cost buys no gate
    gate_inert: str | None = None
    wall_s: Latency  # episode wall time
    server_s: Latency  # per agent call, at the server (all attempts)
    wait_s: Latency  # per agent call, waiting for a slot under the concurrency cap
    completion_tokens_per_s: float | None  # agent completion tokens / agent server seconds
    # the user's burden under the ask-back knobs, summed over the episodes (issue #38;
    # scoring.replay.askback): its extra matcher requests are in the matcher columns too
    askback: Burden | None = None
    # A handoff between agents (the sessions knob's next_model, issue #48): the other model's
    # agent calls and tokens per episode (its sessions), counted to it and not in the agent
    # columns above, which are the cell model's alone (scoring.analyses.handed)
    next_model: str = ""
    next_model_calls: float = 0.0
    next_model_prompt_tokens: float = 0.0
    next_model_completion_tokens: float = 0.0


def quantile(values: Sequence[float], q: float) -> float:
    """The *q* quantile, linear between order statistics (0.0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _latency(values: Sequence[float]) -> Latency:
    if not values:
        return Latency()
    return Latency(
        mean=statistics.fmean(values),
        p50=quantile(values, 0.50),
        p95=quantile(values, 0.95),
        p99=quantile(values, 0.99),
    )


class _Tally:
    """Sums over a cell's episodes."""

    def __init__(self) -> None:
        self.n = 0
        self.counts: dict[str, int] = dict.fromkeys(
            (
                "prompt",
                "completion",
                "cached_tokens",
                "cache_reported",
                "agent_calls",
                "re_asks",
                "matcher_answers",
                "matcher_made",
                "matcher_cached",
                "compiler_made",
                "compiler_cached",
                "memory_made",
                "memory_cached",
                "embedding_made",
                "embedding_cached",
                "helper_tokens",
                "helper_tokens_made",
                "rejected",
            ),
            0,
        )
        self.wall: list[float] = []
        self.server: list[float] = []
        self.wait: list[float] = []
        self.burden: Burden | None = None
        self.handed = [0, 0, 0]  # next_model's agent calls, prompt and completion tokens

    def add(self, record: EpisodeRecord) -> None:
        self.n += 1
        self.wall.append(record.wall_s)
        if (b := burden_of(record)) is not None:
            self.burden = b if self.burden is None else self.burden + b
        k = self.counts
        for turn in record.turns:
            k["re_asks"] += turn.dynamic
            k["rejected"] += len(turn.refused)
            k["matcher_answers"] += any(c.role == "matcher" for c in turn.calls)
            for call in turn.calls:
                if call.role != "agent":
                    self._call(call)
        for call, theirs in agent_calls(record):  # next_model's calls are counted apart (#48)
            if theirs:
                self.handed[0] += 1
                self.handed[1] += call.prompt_tokens
                self.handed[2] += call.completion_tokens
            else:
                self._call(call)

    def _call(self, c: CallRecord) -> None:
        k = self.counts
        if c.role == "agent":
            k["agent_calls"] += 1
            k["prompt"] += c.prompt_tokens
            k["completion"] += c.completion_tokens
            if c.cached_tokens is not None:
                k["cached_tokens"] += c.cached_tokens
                k["cache_reported"] += 1
            self.server.append(c.server_s)
            self.wait.append(c.wait_s)
            return
        k[f"{c.role}_{'cached' if c.cached else 'made'}"] += 1
        tokens = c.prompt_tokens + c.completion_tokens
        if not c.cached:
            k["helper_tokens_made"] += tokens
        if not c.cached or c.shared:
            k["helper_tokens"] += tokens

    def row(self, cell: CellKey) -> CostRow:
        n, k = self.n, self.counts
        server_total = sum(self.server)
        return CostRow(
            cell=cell,
            slug=cell.slug(),
            n=n,
            prompt_tokens=k["prompt"] / n,
            completion_tokens=k["completion"] / n,
            total_tokens=(k["prompt"] + k["completion"]) / n,
            cached_tokens=k["cached_tokens"] / n if k["cache_reported"] else None,
            uncached_tokens=(k["prompt"] - k["cached_tokens"]) / n if k["cache_reported"] else None,
            x_raw=None,
            agent_calls=k["agent_calls"] / n,
            re_asks=k["re_asks"] / n,
            matcher_required=(k["matcher_made"] + k["matcher_cached"]) / n,
            matcher_answers=k["matcher_answers"] / n,
            matcher_made=k["matcher_made"] / n,
            matcher_cached=k["matcher_cached"] / n,
            compiler_required=(k["compiler_made"] + k["compiler_cached"]) / n,
            compiler_made=k["compiler_made"] / n,
            compiler_cached=k["compiler_cached"] / n,
            helper_tokens=k["helper_tokens"] / n,
            helper_tokens_made=k["helper_tokens_made"] / n,
            rejected_per_128=k["rejected"] * 128 / n,
            memory_calls=k["memory_made"] / n,
            embedding_calls=k["embedding_made"] / n,
            wall_s=_latency(self.wall),
            server_s=_latency(self.server),
            wait_s=_latency(self.wait),
            completion_tokens_per_s=k["completion"] / server_total if server_total else None,
            askback=self.burden,
            next_model=cell.knobs.next_model,
            next_model_calls=self.handed[0] / n,
            next_model_prompt_tokens=self.handed[1] / n,
            next_model_completion_tokens=self.handed[2] / n,
        )


def cost_rows(records: Iterable[EpisodeRecord]) -> list[CostRow]:
    """One row per cell with a completed episode: configurations in a stable order, arms in
    ladder order within each (see the module docstring for every column)."""
    tallies: dict[CellKey, _Tally] = {}
    gated: dict[CellKey, list[EpisodeRecord]] = {}
    for record in records:
        if record.termination == "completed":
            tallies.setdefault(record.cell, _Tally()).add(record)
            gated.setdefault(record.cell, []).append(record)
    rows = [
        msgspec.structs.replace(tallies[c].row(c), gate_inert=_inert(gated[c]))
        for c in sorted(tallies, key=cell_sort_key)
    ]
    raw = {config_of(r.cell): r.total_tokens for r in rows if r.cell.arm == "raw"}
    out = []
    for r in rows:
        base = raw.get(config_of(r.cell)) or raw.get(_default_knobs(config_of(r.cell)))
        out.append(msgspec.structs.replace(r, x_raw=r.total_tokens / base) if base else r)
    return out


def _inert(records: Sequence[EpisodeRecord]) -> str | None:
    """Why a gate cell's gate was inert (None: it acted, or the cell has no gate)."""
    if not any(
        r.compile is not None or any(t.matcher_outcome is not None for t in r.turns)
        for r in records
    ):
        return None
    return gate_activity(records).why


def _default_knobs(config: CellKey) -> CellKey:
    return msgspec.structs.replace(config, knobs=Knobs())


class HelperSpend(msgspec.Struct, frozen=True, kw_only=True):
    """One helper over the whole grid: what the arms needed (every completed episode's calls,
    made or served) and what was spent (each request once: the run's helper log)."""

    helper: str  # compiler or matcher
    needed_calls: int
    needed_tokens: int
    spent_calls: int
    spent_tokens: int
    source: str = "helper log"  # where the spend comes from (old runs: "episode logs")

    @property
    def saved_tokens(self) -> int:
        """What sharing saved: the tokens needed less the tokens spent."""
        return self.needed_tokens - self.spent_tokens


def _tokens(calls: Iterable[CallRecord]) -> tuple[int, int]:
    calls = list(calls)
    return len(calls), sum(c.prompt_tokens + c.completion_tokens for c in calls)


def helper_spend(
    records: Iterable[EpisodeRecord], ledger: Iterable[HelperLogLine]
) -> list[HelperSpend]:
    """Per helper used: needed (over the completed episodes of ``records``) against spent
    (the calls of ``ledger``, the run's helper log, each made once). A run whose log holds no
    matcher lines (written before they were) counts the matcher requests its episodes made."""
    needed: dict[str, list[CallRecord]] = {h: [] for h in HELPERS}
    made: dict[str, list[CallRecord]] = {h: [] for h in HELPERS}
    for record in records:
        if record.termination != "completed":
            continue
        for turn in record.turns:
            for c in turn.calls:
                if c.role in needed:
                    needed[c.role].append(c)
                    if not c.cached:
                        made[c.role].append(c)
    spent: dict[str, list[CallRecord]] = {h: [] for h in HELPERS}
    for line in ledger:
        spent["compiler" if line.kind == "compile" else "matcher"] += line.calls
    out = []
    for h in HELPERS:
        source = "helper log"
        if h == "matcher" and not spent[h] and made[h]:
            spent[h], source = made[h], "episode logs"
        if not needed[h] and not spent[h]:
            continue
        n_calls, n_tokens = _tokens(needed[h])
        s_calls, s_tokens = _tokens(spent[h])
        out.append(
            HelperSpend(
                helper=h,
                needed_calls=n_calls,
                needed_tokens=n_tokens,
                spent_calls=s_calls,
                spent_tokens=s_tokens,
                source=source,
            )
        )
    return out
