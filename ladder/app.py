"""The ``ladder`` command line. Each command lives in its own module; this file wires them.

Commands load lazily (:data:`COMMANDS`): ``ladder --version``, ``ladder -h`` and a typo'd
command import no command's module, so they answer at once; ``ladder X`` imports X's module
and its dependencies only (#49, #50).

Every usage error (an unknown option, a value of the wrong type, a typo'd command, a
command's :class:`ladder.errors.UsageError`) is one ``error:`` line on stderr and exit 2, never
click's usage box.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import inspect
import re
import sys
from collections.abc import Callable, Sequence
from difflib import get_close_matches
from types import ModuleType
from typing import Any, NamedTuple

import typer
from typer.core import TyperCommand, TyperGroup
from typer.models import CommandInfo, TyperInfo

from ladder.early import early_check
from ladder.errors import USAGE_EXIT, UsageError, error_text, shown
from runner.rundir.errors import RunDirError

__all__ = ["COMMANDS", "Lazy", "app", "main"]


def _click(part: str) -> ModuleType:
    """A module of click (vendored by typer >= 0.25, a dependency before)."""
    for name in (f"typer._click.{part}", f"click.{part}"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError("click")  # pragma: no cover - typer always ships one


_EXC = _click("exceptions")


class Lazy(NamedTuple):
    """A command of ``ladder``, imported only when it runs: ``target`` is ``"module:attr"``
    (a command function, or a :class:`typer.Typer` of subcommands when ``group``) and ``help``
    its line in ``ladder -h``, which a test holds equal to the command's own (the function's
    first docstring sentence, or the group's help). ``plugins``: whether it reads a registry
    that other packages add to (arms, analyses, figures, prompt policies), so that the root
    loads the installed plugins before it runs; a command that reads none starts without."""

    target: str
    help: str
    group: bool = False
    plugins: bool = True


COMMANDS: dict[str, Lazy] = {
    "generate": Lazy(
        "ladder.generate:generate",
        "Generate episodes deterministically from their spec and print them.",
        plugins=False,  # episodes from their spec: no arm, analysis, figure or policy
    ),
    "run": Lazy(
        "ladder.run:run", "Run a grid (or resume it: rerun the same command after a crash)."
    ),
    "validate": Lazy(
        "ladder.validate:validate",
        "Check a grid file, then send one tiny request to each endpoint and model.",
    ),
    "demo": Lazy(
        "ladder.demo:demo",
        "The main job on the embedded scripted endpoint: a small grid of every arm with the "
        "synthetic agent, the ladder printed live, and a report written to OUT/report.md.",
    ),
    "cost": Lazy(
        "ladder.cost:cost",
        "Per configuration and arm (Table 7 shape): prompt, completion and total agent tokens "
        "per episode, the total as a multiple of the raw arm, prefix-cached prompt tokens, agent "
        "calls and re-ask turns, the helper calls and tokens each arm needs (what it would cost "
        "run alone: matcher and compiler, made / served from the cache), rejected bookings per "
        "128 episodes; then episode wall time, agent-call server time and slot wait, and "
        "completion tokens per second.",
    ),
    "score": Lazy(
        "ladder.score:score",
        "Rescore every episode log under LOGDIR offline (no model): ladder tables under the "
        "primary and decline-aware scorings with Wilson CIs and Holm-adjusted exact McNemar "
        "p-values, and the per-channel error table; with --episodes, one row per episode "
        "(success under both scorings, the first failing turn and its channel, errors per "
        "channel, tokens, calls, wall time, termination).",
    ),
    "compare": Lazy(
        "ladder.compare:compare",
        "Compare two runs cell by cell: the seeds both counted, paired, with exact McNemar "
        "p-values (Holm within each scoring); a rerun, a second model or another server.",
    ),
    "report": Lazy(
        "ladder.report:report",
        "Write a Markdown report of LOGDIR's results (PNG plots with --figures).",
    ),
    "paraphrase": Lazy(
        "ladder.paraphrase:paraphrase",
        "Rewrite every ask and redo-probe wording three times with a held-out model into a "
        "tier-2 paraphrase cache (Appendix A.5); resumable.",
    ),
    "show": Lazy(
        "ladder.show:show",
        "Print episodes of LOGDIR turn by turn: kind and label, the user text as sent (the "
        "arm's additions apart), the reply, bookings admitted and refused, the verdict and "
        "error channels, the matcher's answer and the directive; failing turns marked.",
    ),
    "view": Lazy(
        "ladder.view:view",
        "Serve a local web page over LOGDIR: the cells with strict and decline-aware success, "
        "CIs, channels and cost; each cell's episodes (failed only, by channel, by seed); each "
        "episode turn by turn; the same seed under two arms side by side.",
    ),
    "probe": Lazy(
        "ladder.probe:probe",
        "Re-ask the trap turns of a run's arm with one thing changed (Appendix A.4): each "
        "variant once greedy and --samples times sampled at the model card's settings, scored "
        "on the spot with the receipt parser; resumable.",
    ),
    "serve": Lazy(
        "serve.cli:serve_app",
        "Serve the scripted endpoint, or print / launch the server of a paper model.",
        group=True,
        plugins=False,  # the endpoint and the launch recipes read no registry
    ),
    "domain": Lazy(
        "ladder.domain:domain_app",
        "Domain packs: check a pack file, show a pack, or write a new skeleton.",
        group=True,
    ),
}


def load_command(name: str) -> TyperCommand | TyperGroup:
    """The click command of ``ladder NAME``, built from its module (imported here)."""
    lazy = COMMANDS[name]
    module, _, attr = lazy.target.partition(":")
    target = getattr(importlib.import_module(module), attr)
    if lazy.group:
        if not isinstance(target, typer.Typer):
            raise TypeError(f"{lazy.target} is not a typer.Typer")
        return typer.main.get_group_from_info(
            TyperInfo(target, name=name),
            pretty_exceptions_short=app.pretty_exceptions_short,
            suggest_commands=True,
            rich_markup_mode=app.rich_markup_mode,
        )
    if not callable(target):
        raise TypeError(f"{lazy.target} is not a function")
    info = CommandInfo(name=name, callback=target, short_help=short_help(target))
    command = typer.main.get_command_from_info(
        info,
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode,
    )
    if not isinstance(command, TyperCommand):
        raise TypeError(f"{lazy.target} did not make a command")
    return command


def _listed(name: str, lazy: Lazy) -> TyperCommand:
    """A stand-in that prints ``name``'s line in ``ladder -h`` as the real command would (a
    group's help shortened to the width, a command's short help whole), loading nothing."""
    if lazy.group:
        return TyperCommand(name, help=lazy.help)
    return TyperCommand(name, short_help=lazy.help)


class OneLineErrors(TyperGroup):
    """A group whose usage errors print as one ``error:`` line (exit 2), whose commands load
    when they run (:data:`COMMANDS`)."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: object,
    ) -> object:
        _exit_unswept()
        try:
            rv = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except UsageError as e:
            typer.echo(error_text(e.message), err=True)
            sys.exit(USAGE_EXIT)
        except RunDirError as e:  # a library call's one-line refusal (runner.rundir.records)
            typer.echo(f"error: {shown(str(e))}", err=True)
            sys.exit(USAGE_EXIT)
        except _EXC.NoArgsIsHelpError as e:
            typer.echo(shown(e.format_message()), err=True)
            sys.exit(2)
        except _EXC.ClickException as e:  # its message quotes the value as typed (#47)
            typer.echo(error_text(shown(_click_message(e))), err=True)
            sys.exit(e.exit_code)
        except typer.Abort:
            typer.echo("aborted", err=True)
            sys.exit(1)
        code = rv if isinstance(rv, int) else 0
        if standalone_mode:
            sys.exit(code)
        return rv

    # ``ctx`` and ``formatter`` are click's (``typer._click`` or ``click``, by typer's version):
    # typed Any at that boundary.
    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(n for n in self.commands if n not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.commands[cmd_name] = load_command(cmd_name)
        return self.commands.get(cmd_name)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """A typo'd command fails before the root's options are processed: typer >= 0.26
        coerces each parameter through pydantic (0.2 s of CPU), which its one line need not
        pay."""
        if args and not args[0].startswith("-"):
            if args[0] not in self.list_commands(ctx):
                self.resolve_command(ctx, args)
            early_check(args[0], args[1:])  # plainly bad input: one line, nothing loaded
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """typer's, with "did you mean" over every command, loaded or not."""
        try:
            return super().resolve_command(ctx, args)
        except _EXC.UsageError as e:  # typer's own suggestion knows only the loaded commands
            if not args or "Did you mean" in e.message:
                raise
            matches = get_close_matches(args[0], self.list_commands(ctx))
            if matches:
                suggestions = ", ".join(f"{m!r}" for m in matches)
                e.message = f"{e.message.rstrip('.')}. Did you mean {suggestions}?"
            raise

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """typer's listing, each command's line from :data:`COMMANDS` unless it is loaded."""
        names = self.list_commands(ctx)
        commands = [self.commands.get(n) or _listed(n, COMMANDS[n]) for n in names]
        shown = [(n, c) for n, c in zip(names, commands, strict=True) if not c.hidden]
        if shown:
            limit = formatter.width - 6 - max(len(n) for n, _ in shown)
            with formatter.section("Commands"):
                formatter.write_dl([(n, c.get_short_help_str(limit)) for n, c in shown])


_SWEPT: list[bool] = []  # whether this process's exit already skips the final sweeps


def _exit_unswept() -> None:
    """At this process's exit, freeze what the collector tracks (:func:`gc.freeze`), so the
    interpreter's shutdown collections pass over it instead of freeing it cycle by cycle:
    every imported module's classes and functions are reference cycles, and a command that
    imported matplotlib (``ladder report``, which then always drew its figures) spent 0.3-0.4
    s of its wall there, one core busy, ``ladder score`` 0.1-0.2 s (#50, eighth round;
    bench/README.md). Every ``atexit`` handler
    still runs (those registered later, the multiprocessing pools' among them, before this
    one); the memory goes back to the OS when the process ends."""
    if not _SWEPT:
        _SWEPT.append(True)
        atexit.register(gc.freeze)


def _one_line(message: str) -> str:
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


# pydantic's words for a value typer could not convert, and ours (80 columns, #49)
_NOT_CONVERTED = re.compile(r"Input should be a valid (\w+), unable to parse string as an? \w+")


def _click_message(e: Any) -> str:
    """Click's message for ``e``, one line within 80 columns where ours allow: a command's
    own refusal (a BadParameter naming no option) without click's ``Invalid value:`` and
    with the lines it was given (a list of choices wrapped under it, #49); pydantic's
    conversion error in a few words."""
    if isinstance(e, _EXC.BadParameter) and e.param is None and e.param_hint is None:
        return str(e.message)
    return _NOT_CONVERTED.sub(r"not a valid \1", _one_line(e.format_message()))


def _version(value: bool) -> None:
    if value:
        from importlib import metadata  # here: it costs every other command ~0.1 s of CPU

        try:
            version = metadata.version("state-ladder")
        except metadata.PackageNotFoundError:  # pragma: no cover - run from a bare checkout
            version = "unknown"
        typer.echo(f"state-ladder {version}")
        raise typer.Exit(0)


app = typer.Typer(
    name="ladder",
    cls=OneLineErrors,
    rich_markup_mode=None,  # click's plain help: paragraphs rewrapped to the terminal, no <bool> (#40)
    help=(
        "state-ladder: measure how strongly task state should influence an LLM agent.\n\n"
        "Generate episodes, serve the scripted endpoint, run a grid of arms against "
        "OpenAI-compatible endpoints, and score the logs offline."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_version, is_eager=True
    ),
) -> None:
    """state-ladder: measure how strongly task state should influence an LLM agent."""
    lazy = COMMANDS.get(ctx.invoked_subcommand or "")
    if lazy is not None and not lazy.plugins:
        return  # a command that reads no registry (#50)
    from runner.plugins import load_plugins  # here: `ladder --version` and `-h` load no plugin

    for problem in load_plugins():  # other packages' arms, tables, figures (entry points)
        typer.echo(f"warning: {shown(problem)}", err=True)


def short_help(fn: Callable[..., object]) -> str:
    """A command's line in ``ladder -h``: its docstring's first sentence, unwrapped (the
    docstring's own line breaks would break the sentence mid-way in the list)."""
    text = " ".join((inspect.getdoc(fn) or "").split("\n\n")[0].split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def main() -> None:
    app()
