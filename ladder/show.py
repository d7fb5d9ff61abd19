"""``ladder show DIR [--arm A] [--seed N] [--cell SLUG] [--failed] [--channel C]``: episodes
turn by turn in the terminal.

The episodes are chosen from the viewer's index (:mod:`runner.viewer.index`, built once and
cached in DIR) and drawn from :func:`scoring.display.episode_views.episode_view`: a header with the
cell, the strict and decline-aware outcome, tokens and wall time, then every turn with its
kind and label, the user text as sent with the arm's additions apart, the reply, bookings
admitted and refused, the verdict and its error channels, the matcher's answer and the
directive. Failing turns are marked ``!!`` (and red on a terminal); a line marks the first
turn of each session after the first (the sessions knob), with the carried note apart. Piped output is plain
text. ``--limit`` episodes are drawn in full (default 1); the others that match are listed.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from ladder.domain import load_packs_of
from ladder.errors import UsageError
from ladder.limits import MAX_LISTED, MAX_SEED, MAX_TRIALS_SHOWN
from protocol.config import model_label
from protocol.records import Booking
from protocol.state.machine import CHANNELS, RULE_CHANNELS
from protocol.visible import visible
from runner.files import NotRegularFile
from runner.rundir.errors import check_logdir
from runner.rundir.logs import NewerSchemaError
from runner.viewer.data import RunView
from scoring.display.episode_views import filter_rows
from scoring.display.models import CallView, EpisodeView, ErrorView, RowView, TurnView
from scoring.plural import plural

__all__ = ["render_episode", "show"]

_LISTED = 20
_INDENT = "    "

# the paper's six channels and the rules' own (issue #48: over_budget, lapse_missed,
# exclusive_closed)
_CHANNELS = (*CHANNELS, *RULE_CHANNELS)


def _outcome(v: bool | None) -> Text:
    if v is None:
        return Text("not counted", style="yellow")
    return Text("PASS", style="bold green") if v else Text("FAIL", style="bold red")


def _block(label: str, text: str, style: str = "") -> Text:
    # model and server text: shown, never obeyed (escapes rendered visibly; protocol.visible)
    lines = visible(text or "(empty)").splitlines()
    body = "\n".join(_INDENT + "  " + line for line in lines)
    return Text.assemble((f"{_INDENT}{label}:\n", "dim"), (body or _INDENT + "  (empty)", style))


def _bookings(items: Sequence[Booking]) -> str:
    return ", ".join(f"{b.step or '?'} {b.code} {b.work_order}" for b in items) or "none"


def _error(e: ErrorView) -> str:
    repeats = f" (repeats turn {e.original_turn})" if e.original_turn is not None else ""
    return f"{e.channel} {e.step}{repeats}"


def _errors(items: Sequence[ErrorView]) -> str:
    return ", ".join(map(_error, items)) or "no error"


def _calls(calls: Sequence[CallView]) -> str:
    parts = []
    for v in calls:
        c = v.call
        if c.cached:
            parts.append(f"{c.role} cached")
        else:
            tokens = f"{c.prompt_tokens}+{c.completion_tokens} tok"
            parts.append(f"{c.role} {tokens} {v.latency_s:.3f} s")
    return "; ".join(parts) or "none"


def _turn(t: TurnView) -> list[Text]:
    failed = t.failed
    out = [Text(visible(_head(t), newlines=False), style="bold red" if failed else "bold")]
    out += _exchange(t)
    out += [
        Text(
            _INDENT + visible(line, newlines=False),
            style="red" if failed and "verdict" in line else "",
        )
        for line in _details(t)
    ]
    for i, raw in enumerate(t.matcher_replies):
        label = "matcher reply" if i == 0 else "matcher reply after the correction request"
        out.append(_block(label, raw, "dim"))
    return out


def _head(t: TurnView) -> str:
    """A turn's heading: index, kind, step, work order, label and what stood out."""
    head = (
        f"{'!! ' if t.failed else '-- '}turn {t.index} · {t.kind}"
        f"{' (re-ask)' if t.dynamic else ''}"
        f"{' · ' + t.step if t.step else ''}"
        f"{' · ' + t.work_order if t.work_order else ''}"
        f" · label {t.label}"
    )
    if t.decline_aware_label != t.label:
        head += f" (decline-aware {t.decline_aware_label})"
    if t.refused:
        head += f"  GATE REFUSED {len(t.refused)}"
    if t.question is not None:
        head += "  ASKED BACK"
    if overrides := sum(e.override for e in t.escalations):
        head += f"  OVERRIDE {overrides}"
    if refused_esc := sum(not e.override for e in t.escalations):
        head += f"  ESCALATION REFUSED {refused_esc}"
    if t.failed:
        head += "  FAILED: " + _errors(t.errors)
    return head


def _exchange(t: TurnView) -> list[Text]:
    """What was sent (the user's text, the arm's additions apart) and what came back."""
    out: list[Text] = []
    for kind, text in t.sent:
        if kind == "user":
            out.append(_block("user", text))
        elif kind == "carried":  # the note carried over a restart (handoff = "note")
            out.append(_block("handoff note carried from the previous session", text, "magenta"))
        else:
            out.append(_block("added by the arm", text.strip("\n"), "yellow"))
    if t.question is not None:  # the ask knob: the exchange the turn continued with
        why = f"gate asked back ({t.ask_reason}; first reading {t.first_match or 'none'})"
        out.append(_block(why, t.question, "magenta"))
        out.append(_block("user answered", t.answer or "", "magenta"))
    if t.first_reply is not None:
        out.append(_block("first reply (refused the same turn)", t.first_reply, "dim"))
        for notice in t.retry_notices:
            out.append(_block("notice shown on the retry", notice, "yellow"))
    out.append(_block("reply", t.reply, "cyan"))
    if t.reasoning:
        out.append(_block("reasoning", t.reasoning, "dim"))
    return out


def _details(t: TurnView) -> list[str]:
    """The indented lines: bookings, verdict, matcher and directive, calls, corruptions and
    escalations."""
    verdict = f"executed {', '.join(t.executed) or 'nothing'}; {_errors(t.errors)}"
    if t.decline_aware_errors != t.errors:
        verdict += f" (decline-aware: {_errors(t.decline_aware_errors)})"
    matcher = (
        "not consulted"
        if t.matched_redo is None
        else f"step {t.matched_step or 'none'}, explicit redo {'yes' if t.matched_redo else 'no'}"
    )
    if t.matcher_outcome:
        matcher += f" ({t.matcher_outcome})"
    lines = [
        f"admitted: {_bookings(t.admitted)}    refused: {_bookings(t.refused)}",
        f"verdict: {verdict}",
        f"matcher: {matcher}    directive: {t.directive or 'none'}",
        f"calls: {_calls(t.calls)}",
    ]
    if t.corruptions:
        lines.append("corruptions: " + ", ".join(f"{e.kind} {e.step}" for e in t.corruptions))
    for e in t.escalations:  # the escalate knob: each refusal put to the user
        mark = "OVERRIDE (admitted once)" if e.override else "refused by the user"
        lines.append(f"escalation: {e.text} -> {e.answer} [{mark}]")
    return lines


def render_episode(view: EpisodeView, failing_only: bool = False) -> list[Text]:
    """The lines ``ladder show`` prints for one :func:`scoring.display.episode_views.episode_view`."""
    r = view.row
    tok, helpers = r.tokens, r.helpers
    out = [
        Text(visible(f"== {r.arm} · {_unit(r)} · {view.slug}", newlines=False), style="bold"),
        Text.assemble(
            "   strict ",
            _outcome(r.strict),
            "  decline-aware ",
            _outcome(r.decline_aware),
            f"  errors {', '.join(f'{c} {n}' for c, n in r.channels.items()) or 'none'}",
            f"  turns ok {r.turns_ok}/{r.turns}",
            f"  refused {r.refused}" if r.refused else "",
            f"  tokens agent {tok.agent} helper {tok.helper}",
            f"  helper calls needed {helpers.needed} (made {helpers.made}, cached {helpers.cached})"
            if helpers.needed
            else "",
            f"  wall {r.wall_s:.2f} s  termination {visible(view.termination)}",
        ),
    ]
    cut = [f"{role} {n}/{made}" for role, (n, made) in view.cut.items() if n]
    if cut:  # replies that stopped at max_tokens (#49)
        out.append(Text(f"   replies cut at their token budget: {', '.join(cut)}", "yellow"))
    synthetic = "  SYNTHETIC: the scripted synthetic agent, no claim about any model"
    out.append(Text(visible(f"   model {model_label(view.cell)}", newlines=False)))
    if view.synthetic:
        out[-1].append(synthetic, style="yellow")
    if view.mismatches:
        mismatches = visible("; ".join(view.mismatches), newlines=False)
        out.append(Text("   log and episode differ: " + mismatches, "yellow"))
    for t in view.turns:
        if t.session_mark is not None:  # a restart (the sessions knob), failing turns or not
            out.append(Text(t.session_mark, style="bold magenta"))
        if failing_only and not t.failed:
            continue
        out += _turn(t)
    c = view.compile
    if c is not None:
        differ = [s.step for s in c.steps if s.deps_differ or s.code_differs]
        out.append(
            Text(f"compile: {len(differ)} steps differ from the generator"
                 + (f" ({', '.join(differ)})" if differ else ""))
        )  # fmt: skip
        for what, error, raw in (
            ("graph", c.graph_error, c.graph_reply),
            ("revision", c.revision_error, c.revision_reply),
        ):
            if error is not None:
                out.append(Text(f"compile error ({what}): {error}", style="red"))
            if raw is not None:
                out.append(_block(f"compiler's {what} reply", raw, "dim"))
    return out


def _brief(rv: RunView, row: RowView) -> list[Text]:
    """The brief as sent (#49): the system message, or with ``brief_role = "user"`` the text
    that led the first user turn (turn 0 above shows the user text without it)."""
    found = rv.brief(row.slug, row.seed, row.trial)
    if found is None:
        return [Text("brief: not available (the episode does not regenerate)", style="yellow")]
    text, role = found
    where = "the system message" if role == "system" else "leading the first user message"
    return [_block(f"brief as sent ({where}, brief_role = {role})", text, "dim")]


def _unit(row: RowView) -> str:
    """``seed N``, with its trial when the run repeats trials (--trials)."""
    return f"seed {row.seed}" + (f" trial {row.trial}" if row.trial else "")


def _matching(
    rv: RunView,
    cell: str | None,
    arm: str | None,
    failed: bool,
    channel: str | None,
    seed: int | None,
    trial: int | None = None,
) -> list[RowView]:
    slugs = rv.index.slugs()
    if cell is not None:
        if cell not in slugs:
            hits = [s for s in slugs if cell in s]
            if not hits:
                raise UsageError(f"no cell {cell!r} in the logs (ladder view lists them)")
            slugs = hits
        else:
            slugs = [cell]
    if arm is not None:
        arms = sorted({k.arm for s in slugs if (k := rv.index.cell_key(s)) is not None})
        if arm not in arms:
            hint = difflib.get_close_matches(arm, arms, n=1)
            did = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise UsageError(
                f"--arm: no arm {arm!r} in the logs{did}; their arms: {', '.join(arms)}"
            )
    rows: list[RowView] = []
    for slug in slugs:
        key = rv.index.cell_key(slug)
        if arm is not None and (key is None or key.arm != arm):
            continue
        entries = (e.row for e in rv.index.entries(slug))
        rows += filter_rows(
            entries, failed="strict" if failed else None, channel=channel, seed=seed, trial=trial
        )
    return rows


def show(
    logdir: Annotated[Path, typer.Argument(help="A run directory (or its logs/ folder).")],
    arm: Annotated[str | None, typer.Option("--arm", help="Only this arm's cells.")] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Only this seed.", max=MAX_SEED)
    ] = None,
    trial: Annotated[
        int | None,
        typer.Option(
            "--trial",
            help="Only this trial of each seed (--trials; 0 is the first).",
            max=MAX_TRIALS_SHOWN,
        ),
    ] = None,
    cell: Annotated[
        str | None, typer.Option("--cell", help="A cell slug (or a part of one).")
    ] = None,
    failed: Annotated[
        bool, typer.Option("--failed", help="Only episodes that fail strict success.")
    ] = False,
    channel: Annotated[
        str | None,
        typer.Option("--channel", help=f"Only episodes with errors in: {', '.join(_CHANNELS)}."),
    ] = None,
    failing_turns: Annotated[
        bool, typer.Option("--failing-turns", help="Draw only the failing turns.")
    ] = False,
    limit: Annotated[
        int, typer.Option("--limit", help="Episodes drawn in full.", max=MAX_LISTED)
    ] = 1,
    brief: Annotated[
        bool,
        typer.Option("--brief", help="Also print the brief (system prompt) as it was sent."),
    ] = False,
) -> None:
    """Print episodes of LOGDIR turn by turn: kind and label, the user text as sent (the
    arm's additions apart), the reply, bookings admitted and refused, the verdict and error
    channels, the matcher's answer and the directive; failing turns marked. Plain text when
    piped."""
    check_logdir(logdir)  # the line of every reader of a run (ladder.early)
    load_packs_of(logdir)  # the file domain packs the run's episodes regenerate with
    if channel is not None and channel not in _CHANNELS:
        raise UsageError(f"--channel must be one of {', '.join(_CHANNELS)} (got {channel!r})")
    if limit < 1:
        raise UsageError(f"--limit must be at least 1 (got {limit})")
    if trial is not None and trial < 0:
        raise UsageError(f"--trial must be at least 0 (got {trial})")
    rv = RunView(logdir)
    try:
        rv.refresh()
    except (NewerSchemaError, NotRegularFile) as e:  # a planted FIFO or link: one line (#47)
        raise UsageError(str(e)) from None
    if not rv.index.slugs():
        raise UsageError(f"no readable episode record under {logdir}")
    rows = _matching(rv, cell, arm, failed, channel, seed, trial)
    if not rows:
        typer.echo("no episode matches", err=True)
        raise typer.Exit(1)
    tty = sys.stdout.isatty()
    console = Console(
        width=None if tty else 120, no_color=not tty, highlight=False, markup=False, soft_wrap=True
    )
    for row in rows[:limit]:
        view = rv.episode(row.slug, row.seed, row.trial)
        assert view is not None
        for line in render_episode(view, failing_turns):
            console.print(line)
        if brief:
            for line in _brief(rv, row):
                console.print(line)
        console.print()
    rest = rows[limit:]
    if rest:
        verb = "matches" if len(rest) == 1 else "match"
        console.print(f"{plural(len(rest), 'more episode')} {verb} (--limit draws more):")
        for row in rest[:_LISTED]:
            console.print(visible(f"  {row.slug} {_unit(row)}", newlines=False))
        if len(rest) > _LISTED:
            console.print(f"  ... {len(rest) - _LISTED} more")
