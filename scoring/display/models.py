"""The typed views ``ladder show`` and ``ladder view`` draw (built by
:mod:`scoring.display.episode_views`): msgspec Structs from the log record to the JSON the page
reads, field for field (``runner/viewer/static/app.js`` reads these names). Pure data.

* :class:`RowView`: one line of an episode list; :class:`EpisodesView` a cell's list.
* :class:`TurnView`: one turn with the replay's verdict under both scorings.
* :class:`EpisodeView`: one episode turn by turn, its compile (:class:`CompileView`).
* :class:`CompareView`: the same seed under two cells, turn by turn.
* :class:`CellView`, :class:`ContrastView`, :class:`CellsView`: the run's overview.
"""

from __future__ import annotations

import msgspec

from protocol.records import (
    AccuracyRecord,
    Booking,
    CallRecord,
    CellKey,
    CompiledRevisionRecord,
    CorruptionEvent,
    EpisodeSpec,
    ValidatorRecord,
)
from scoring.results.lines import CellLine, ContrastLine

__all__ = [
    "CallView",
    "CellCost",
    "CellView",
    "CellsView",
    "CompareRow",
    "CompareView",
    "CompileStepView",
    "CompileView",
    "ContrastView",
    "EpisodeView",
    "EpisodesView",
    "ErrorView",
    "EscalationView",
    "HelperCalls",
    "IndexingView",
    "LogView",
    "PairView",
    "RevisionView",
    "RowView",
    "Tokens",
    "TurnView",
]


class _View(msgspec.Struct, frozen=True, kw_only=True):
    pass


class Tokens(_View, frozen=True, kw_only=True):
    agent: int  # the agent's calls that made a request
    helper: int  # the helper requests this episode made (scoring.analyses.cost's helper_tokens)


class HelperCalls(_View, frozen=True, kw_only=True):
    """The helper calls (matcher and compiler) an episode's arm needs, as
    :func:`scoring.analyses.cost.cost_rows` counts them: made by this episode or served without a
    request (the cache, another arm's episode of the seed, the run's precompile)."""

    needed: int = 0
    made: int = 0
    cached: int = 0


class RowView(_View, frozen=True, kw_only=True):
    slug: str
    arm: str  # the arm with its non-default knobs
    seed: int
    trial: int = 0  # which trial of its seed (--trials); 0 without repeated trials
    termination: str
    counted: bool
    strict: bool | None  # None: not counted (infrastructure error, unscorable)
    decline_aware: bool | None
    channels: dict[str, int]  # the channels with errors, primary scoring
    decline_aware_channels: dict[str, int]
    turns: int
    turns_ok: int
    tokens: Tokens
    helpers: HelperCalls = HelperCalls()
    wall_s: float
    corruptions: int
    refused: int  # distinct bookings the gate refused
    mismatches: int


class EpisodesView(_View, frozen=True, kw_only=True):
    slug: str
    arm: str
    total: int
    episodes: list[RowView]
    label: str = ""  # the model as every table shows it (protocol.config.model_label, #49)
    synthetic: bool = False


class ErrorView(_View, frozen=True, kw_only=True):
    channel: str
    step: str
    # a re-execution: the turn that executed the step before (the one it repeats)
    original_turn: int | None = None


class CallView(_View, frozen=True, kw_only=True):
    call: CallRecord
    latency_s: float  # slot wait and server time


class EscalationView(_View, frozen=True, kw_only=True):
    """A refused booking the gate put to the user (the escalate knob): the gate's words, the
    user's answer; ``override``: confirmed, the booking admitted once."""

    booking: Booking
    status: str
    step: str | None
    text: str
    answer: str
    override: bool


class TurnView(_View, frozen=True, kw_only=True):
    index: int
    kind: str
    step: str | None
    work_order: str | None
    dynamic: bool
    named: list[str]
    label: str | None  # None: not replayed
    decline_aware_label: str | None
    executed: list[str]
    errors: list[ErrorView]
    decline_aware_errors: list[ErrorView]
    failed: bool
    failed_decline_aware: bool
    user_text: str
    arm_text: str
    # ("user" | "styled" | "injected" | "arm" | "carried", text), in the order sent
    sent: list[tuple[str, str]]
    reply: str
    reasoning: str
    first_reply: str | None
    retry_notices: list[str] = []  # the notices the same-turn retry showed (D.3)
    admitted: list[Booking]
    refused: list[Booking]
    matched_step: str | None
    matched_redo: bool | None
    matcher_outcome: str | None
    matcher_replies: list[str] = []  # raw replies of a corrected or malformed answer (bounded)
    directive: str | None
    calls: list[CallView]
    corruptions: list[CorruptionEvent]
    # the results of the tool calls that failed (the tool_failure knob), as the agent read
    # them: text the stress knob injected
    tool_failures: list[str] = []
    # ask back and escalation (issue #38): the gate's question, the user's answer, why the
    # gate asked and its first reading; each refusal put to the user and the user's answer
    question: str | None = None
    answer: str | None = None
    ask_reason: str | None = None
    first_match: str | None = None
    escalations: list[EscalationView] = []
    # the sessions knob (issue #48; scoring.display.sessions_view): the session the turn is in
    # (from 1), the line that marks the first turn of each session after the first, and the
    # note carried into it (the message's ("carried", text) part)
    session: int = 1
    session_mark: str | None = None
    carried: str | None = None


class CompileStepView(_View, frozen=True, kw_only=True):
    step: str
    generator_deps: list[str] | None  # None: no such step
    compiled_deps: list[str] | None
    generator_code: str | None
    compiled_code: str | None
    deps_differ: bool
    code_differs: bool


class RevisionView(_View, frozen=True, kw_only=True):
    cancel: str | None
    rewires: dict[str, list[str]]
    relax: list[str] | None


class CompileView(_View, frozen=True, kw_only=True):
    model: str
    steps: list[CompileStepView]
    graph_error: str | None
    revision: CompiledRevisionRecord
    generator_revision: RevisionView | None
    revision_error: str | None
    validator: ValidatorRecord
    accuracy: AccuracyRecord
    enforcing: bool
    cached: bool
    graph_reply: str | None = None  # the raw reply of a graph that could not be read (bounded)
    revision_reply: str | None = None  # likewise for the revision


class PairView(_View, frozen=True, kw_only=True):
    slug: str
    arm: str


class EpisodeView(_View, frozen=True, kw_only=True):
    cell: CellKey
    slug: str
    row: RowView
    spec: EpisodeSpec
    synthetic: bool
    termination: str
    error: str | None
    mismatches: list[str]
    refused: int
    false_completions: int
    citations: int
    turns: list[TurnView]
    compile: CompileView | None
    corruptions: list[CorruptionEvent]
    pairs: list[PairView] = []  # the other cells of the configuration that ran the seed
    label: str = ""  # the model as every table shows it (protocol.config.model_label, #49)
    # replies cut at their token budget per role: (cut, made); roles with no reply left out
    cut: dict[str, tuple[int, int]] = {}


class CompareRow(_View, frozen=True, kw_only=True):
    a: TurnView | None
    b: TurnView | None
    differs: bool


class CompareView(_View, frozen=True, kw_only=True):
    seed: int
    a: RowView
    b: RowView
    rows: list[CompareRow]
    differing: int


class CellCost(_View, frozen=True, kw_only=True):
    """A cell's cost per episode (means over its completed episodes; None without one)."""

    n: int
    prompt_tokens: float | None = None
    completion_tokens: float | None = None
    total_tokens: float | None = None
    helper_tokens: float | None = None
    agent_calls: float | None = None
    helper_calls: float | None = None  # the helper calls the arm requires, made or served
    helper_calls_cached: float | None = None  # of them, served from the cache
    episode_latency_median_s: float | None = None
    x_raw: float | None = None  # total_tokens over the raw cell's of the configuration


class CellView(_View, frozen=True, kw_only=True):
    slug: str
    config: str  # the configuration's label
    arm_label: str
    line: CellLine
    cost: CellCost
    gate_inert: str | None = None  # why the cell's gate never gated (None: it did, or no gate)
    # the roles whose share of replies cut at their token budget (the line's ``cut``) passes
    # the run's ``cut_threshold`` (#49; scoring.analyses.truncation)
    cut_over: list[str] = []


class ContrastView(_View, frozen=True, kw_only=True):
    config: str  # the configuration's label
    line: ContrastLine


class LogView(_View, frozen=True, kw_only=True):
    files: int
    records: int
    corrupt: list[str]
    duplicates: int


class IndexingView(_View, frozen=True, kw_only=True):
    """An index being built in the background (#50): the overview shows what is in so far."""

    files: int  # log files indexed so far
    total: int  # log files to index
    episodes: int  # episodes indexed so far


class CellsView(_View, frozen=True, kw_only=True):
    run: str
    cells: list[CellView]
    contrasts: list[ContrastView]
    log: LogView
    # The report's SYNTHETIC warning (scoring.report.markdown.synthetic_warning), "" if none.
    synthetic: str = ""
    # The run's details from its manifest (scoring.report.details.run_details), #40.
    details: list[tuple[str, str]] = []
    # a cell's role is warned about past this share of its replies cut at their token
    # budget (scoring.analyses.truncation.CUT_WARN_SHARE, #49)
    cut_threshold: float = 0.0
    # set while the index is built in the background: the lines are those of the episodes
    # indexed so far (None: every episode is in, #50)
    indexing: IndexingView | None = None
