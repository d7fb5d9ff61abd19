"""The ``ladder`` command line. Each command lives in its own module; this file wires them.

Every usage error (an unknown option, a value of the wrong type, a typo'd command, a
command's :class:`ladder.errors.UsageError`) is one ``error:`` line on stderr and exit 2, never
click's usage box.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from types import ModuleType

import typer
from typer.core import TyperGroup

from ladder import (
    compare,
    cost,
    demo,
    generate,
    paraphrase,
    probe,
    report,
    run,
    score,
    show,
    validate,
    view,
)
from ladder.domain import domain_app
from ladder.errors import USAGE_EXIT, UsageError, error_text
from runner.plugins import load_plugins
from runner.rundir.records import RunDirError
from serve.cli import serve_app

__all__ = ["app", "main"]


def _click_exceptions() -> ModuleType:
    """click's exceptions module (vendored by typer >= 0.25, a dependency before)."""
    for name in ("typer._click.exceptions", "click.exceptions"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError("click")  # pragma: no cover - typer always ships one


_EXC = _click_exceptions()


class OneLineErrors(TyperGroup):
    """A group whose usage errors print as one ``error:`` line (exit 2)."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: object,
    ) -> object:
        try:
            rv = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except UsageError as e:
            typer.echo(error_text(e.message), err=True)
            sys.exit(USAGE_EXIT)
        except RunDirError as e:  # a library call's one-line refusal (runner.rundir.records)
            typer.echo(f"error: {e}", err=True)
            sys.exit(USAGE_EXIT)
        except _EXC.NoArgsIsHelpError as e:
            typer.echo(e.format_message(), err=True)
            sys.exit(2)
        except _EXC.ClickException as e:
            typer.echo(f"error: {_one_line(e.format_message())}", err=True)
            sys.exit(e.exit_code)
        except typer.Abort:
            typer.echo("aborted", err=True)
            sys.exit(1)
        code = rv if isinstance(rv, int) else 0
        if standalone_mode:
            sys.exit(code)
        return rv


def _one_line(message: str) -> str:
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def _version(value: bool) -> None:
    if value:
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
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_version, is_eager=True
    ),
) -> None:
    """state-ladder: measure how strongly task state should influence an LLM agent."""
    for problem in load_plugins():  # other packages' arms, tables, figures (entry points)
        typer.echo(f"warning: {problem}", err=True)


def short_help(fn: Callable[..., object]) -> str:
    """A command's line in ``ladder -h``: its docstring's first sentence, unwrapped (the
    docstring's own line breaks would break the sentence mid-way in the list)."""
    text = " ".join((inspect.getdoc(fn) or "").split("\n\n")[0].split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


for _name, _fn in (
    ("generate", generate.generate),
    ("run", run.run),
    ("validate", validate.validate),
    ("demo", demo.demo),
    ("cost", cost.cost),
    ("score", score.score),
    ("compare", compare.compare),
    ("report", report.report),
    ("paraphrase", paraphrase.paraphrase),
    ("show", show.show),
    ("view", view.view),
    ("probe", probe.probe),
):
    app.command(_name, short_help=short_help(_fn))(_fn)
app.add_typer(serve_app, name="serve")
app.add_typer(domain_app, name="domain")


def main() -> None:
    app()
