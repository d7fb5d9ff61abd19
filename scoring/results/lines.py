"""The typed result lines: ``results.jsonl`` and ``ladder score --json``. Pure.

A tagged union of msgspec Structs on the field ``type``:

* :class:`CellLine` (``cell``): one cell's successes under both scorings, channels, labels;
* :class:`ContrastLine` (``contrast``): one adjacent (or side) contrast of a configuration;
* :class:`HelperLine` (``helpers``): a gate cell's compile accuracy and matcher agreement.

Every line carries a ``status``:

* ``provisional``: streamed while a run goes on (a contrast's Holm family is then one ladder,
  and a cell line is re-emitted when a later record lands in a complete cell);
* ``final``: appended when a run ends, equal to ``ladder score --json`` over the whole run
  directory (Holm over every contrast of a scoring);
* ``superseded``: an earlier line that a later run's final lines replace (a resume, a grid
  change); the run's end rewrites the file once to mark them.

Which lines to use: the ``final`` ones. While no run has finished (a run under way, or
killed), the last ``provisional`` line of each cell and contrast. Lines written before the
status existed read as ``provisional``. :func:`current_lines` applies that rule.

On disk a line's ``cell`` (``config`` for a contrast) is the cell key with every knob both
flattened beside the other fields (for filtering) and as a ``knobs`` object; a contrast's
``config`` has no ``arm``. :func:`line_json` writes that shape; :func:`decode_line` reads it
(and the lines older runs wrote) back into the Structs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import msgspec

from protocol.config import model_label
from protocol.records import CellKey
from scoring.replay.askback import Burden

__all__ = [
    "CellLine",
    "CompileSummary",
    "ContrastLine",
    "GateActivity",
    "HelperLine",
    "MatcherSummary",
    "ResultLine",
    "Status",
    "config_json",
    "current_lines",
    "decode_line",
    "line_json",
    "line_key",
    "with_status",
]

Status = Literal["provisional", "final", "superseded"]


class CellLine(msgspec.Struct, frozen=True, kw_only=True, tag="cell", tag_field="type"):
    cell: CellKey
    slug: str
    n: int  # scorable episodes without an infrastructure error
    strict_successes: int
    strict: float | None
    strict_ci: tuple[float, float]
    decline_aware_successes: int
    decline_aware: float | None
    decline_aware_ci: tuple[float, float]
    infrastructure_errors: int
    unscorable: int
    mismatched_episodes: int
    channels: dict[str, int]  # primary scoring
    decline_aware_channels: dict[str, int]
    labels: dict[str, int]
    channel_rates: dict[str, float | int | None]
    refused: int
    false_completions: int
    citations: int
    redisplays: int
    unknown: int
    turn_accuracy: float | None
    seeds: tuple[int, ...]
    status: Status = "provisional"
    # Episodes in n that ended on the model's failure (a context overflow, #40): failures
    # under both scorings; 0 on lines older than the field.
    context_overflows: int = 0
    # episodes ended by a non-reply (content filter, empty reply; protocol.records.NO_REPLY):
    # excluded from n like infrastructure errors, counted apart from them (docs/security.md)
    no_reply: int = 0
    # the user's burden summed over the counted episodes (the ask-back knobs, issue #38;
    # scoring.replay.askback); None for a cell without them (and in lines older than it)
    askback: Burden | None = None
    # Repeated trials (--trials K, #40): the trials per seed, and per scoring ("strict",
    # "decline_aware") pass^1 .. pass^K (scoring.results.trials; None where no seed has k
    # counted trials); {} with one trial (and on lines older than the fields).
    trials: int = 1
    pass_k: dict[str, tuple[float | None, ...]] = {}
    # Replies cut at their token budget (finish_reason length, #49) per role (agent,
    # matcher, compiler): (cut, made) over every request of the cell's episodes, those not
    # counted in n included (scoring.analyses.truncation); {} on lines older than the field.
    cut: dict[str, tuple[int, int]] = {}

    def successes(self, scoring: str) -> int:
        return self.strict_successes if scoring == "strict" else self.decline_aware_successes

    def rate(self, scoring: str) -> float | None:
        return self.strict if scoring == "strict" else self.decline_aware

    def ci(self, scoring: str) -> tuple[float, float]:
        return self.strict_ci if scoring == "strict" else self.decline_aware_ci


class ContrastLine(msgspec.Struct, kw_only=True, tag="contrast", tag_field="type"):
    """Mutable only for ``p_holm``, set once the Holm family is known."""

    config: CellKey  # the configuration: the cell key with its arm blanked
    a: str
    b: str
    scoring: str
    n: int
    a_successes: int
    b_successes: int
    b_only: int
    a_only: int
    p: float
    p_holm: float | None = None
    status: Status = "provisional"
    # The contrast's kind and Holm family (scoring.results.families): ladder, side, variant,
    # wording, brief, schedule; lines older than the field read as ladder contrasts.
    kind: str = "ladder"
    family: str | None = None
    # The paper table (or section) whose Holm family the contrast joins (protocol.arms.table);
    # None on ladder lines (the family names its table) and on lines older than the field.
    table: str | None = None
    wording_of: str | None = None  # wording contrasts: the canonical configuration and stress
    # The arms of the contrast whose gate was inert (GateActivity.inert): the contrast then
    # measures no gate and is flagged, never printed as a plain null; () when both acted.
    gate_inert: tuple[str, ...] = ()


class CompileSummary(msgspec.Struct, frozen=True, kw_only=True):
    """Compile accuracy against the generator (Table 5 shape) and validator verdicts."""

    n: int = 0
    dep: float | None = None
    code: float | None = None
    cancel: float | None = None
    rewire: float | None = None
    relax: float | None = None
    exact: float | None = None
    validator_flagged: int = 0
    flags: dict[str, int] = {}


class MatcherSummary(msgspec.Struct, frozen=True, kw_only=True):
    """Matcher agreement and explicit-redo precision / recall (Table 11 shape)."""

    episodes: int = 0
    turns: int = 0
    agree: int = 0
    agreement: float | None = None
    # Table 4's count: agreement over ask, premature and redo-probe turns
    rewritten_turns: int = 0
    rewritten_agree: int = 0
    rewritten_agreement: float | None = None
    redo_flags: int = 0
    redo_turns: int = 0
    redo_precision: float | None = None
    redo_recall: float | None = None
    ambiguous: int = 0
    ambiguous_null: int = 0
    matcher_calls: int = 0
    matcher_cached: int = 0
    # per consulted turn (logs with matcher_outcome): answered a step, answered null, parsed
    # only after the correction request, or still malformed after it; {} in older lines
    outcomes: dict[str, int] = {}


class GateActivity(msgspec.Struct, frozen=True, kw_only=True):
    """Whether a gate cell's gate did anything (``scoring.results.gate_report``): its
    compiles that failed, were empty or were flagged, its matcher answers still malformed
    after the correction request, the directives and rejection notices it showed; ``inert``
    when it never acted (or acted only on failed compiles), ``why`` the one line saying so."""

    episodes: int = 0
    compiles: int = 0
    compile_failed: int = 0  # the graph or the revision reply could not be read
    compile_empty: int = 0  # no step compiled
    compile_flagged: int = 0  # the validator flagged the compile
    compile_errors: dict[str, int] = {}  # each error, how many compiles ended on it
    matcher_turns: int = 0  # turns the matcher was consulted on
    matcher_malformed: int = 0  # still malformed after the correction request
    directives: int = 0  # turns that showed a directive
    notices: int = 0  # rejection notices shown (same-turn retries included)
    arm_turns: int = 0  # turns the arm added text to (directive, checklist line, ...)
    acted_turns: int = 0  # turns the gate showed anything on or refused a booking
    inert: bool = False
    why: str | None = None


class HelperLine(msgspec.Struct, frozen=True, kw_only=True, tag="helpers", tag_field="type"):
    cell: CellKey
    compile: CompileSummary
    matcher: MatcherSummary
    status: Status = "provisional"
    gate: GateActivity = GateActivity()  # episodes 0 in lines older than the field


ResultLine = CellLine | ContrastLine | HelperLine
_any_decoder = msgspec.json.Decoder()


def config_json(key: CellKey, *, arm: bool = False) -> dict[str, object]:
    """A cell key as it is written in a line: knobs flattened and as an object; ``label``
    beside ``model`` (``qwen3-235b <- scripted/synthetic``: :func:`model_label`), ignored
    when the line is read back."""
    out: dict[str, object] = {"arm": key.arm} if arm else {}
    fields = msgspec.structs.asdict(key)
    knobs = msgspec.structs.asdict(key.knobs)
    for k, v in fields.items():
        if k not in ("arm", "knobs"):
            out[k] = v
        if k == "model":  # beside it, the model as every table shows it (#49)
            out["label"] = model_label(key)
    out.update(knobs)  # flattened, for filtering
    out["knobs"] = knobs  # as an object: msgspec.convert(line["cell"], CellKey) round-trips
    return out


def line_json(line: ResultLine) -> dict[str, object]:
    """The JSON-able mapping of *line* (the shape ``results.jsonl`` holds)."""
    out: dict[str, object] = msgspec.to_builtins(line)
    if isinstance(line, ContrastLine):
        out["config"] = config_json(line.config)
    else:
        out["cell"] = config_json(line.cell, arm=True)
    return out


def decode_line(data: bytes | str) -> ResultLine:
    """One line of ``results.jsonl`` (or of ``ladder score --json``) back into its Struct.

    Raises ``msgspec.DecodeError`` / ``msgspec.ValidationError`` for a line that is not a
    result line (an episode or cost line among them, say)."""
    raw = _any_decoder.decode(data)
    config = raw.get("config") if isinstance(raw, dict) else None
    if isinstance(config, dict):  # a configuration has no arm; its key blanks it
        raw["config"] = {**config, "arm": ""}
    line: ResultLine = msgspec.convert(raw, ResultLine)
    return line


def with_status(lines: Iterable[ResultLine], status: Status) -> list[ResultLine]:
    """The *lines* with their status set (contrast lines are copied, not changed)."""
    return [msgspec.structs.replace(x, status=status) for x in lines]


def line_key(line: ResultLine) -> tuple[object, ...]:
    """What a later line of the same kind replaces: one cell, one contrast of a scoring."""
    if isinstance(line, ContrastLine):
        return ("contrast", line.config, line.a, line.b, line.scoring)
    return (line.__struct_config__.tag, line.cell)


def current_lines(lines: Sequence[ResultLine]) -> list[ResultLine]:
    """The lines to use: the ``final`` ones when a run has finished, else the last
    ``provisional`` line of each cell and contrast (``superseded`` lines never)."""
    final = [x for x in lines if x.status == "final"]
    if final:
        return final
    last: dict[tuple[object, ...], ResultLine] = {}
    for x in lines:
        if x.status == "provisional":
            last.pop(line_key(x), None)
            last[line_key(x)] = x
    return list(last.values())
