"""The ``ladder`` command line. Each command lives in its own module; this file wires them."""

from __future__ import annotations

import typer

from runner import cmd_cost, cmd_generate, cmd_report, cmd_run, cmd_score, cmd_show, cmd_view
from serve.cli import serve_app

__all__ = ["app", "main"]

app = typer.Typer(
    name="ladder",
    help=(
        "state-ladder: measure how strongly task state should influence an LLM agent.\n\n"
        "Generate episodes, serve the scripted endpoint, run a grid of arms against "
        "OpenAI-compatible endpoints, and score the logs offline."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """state-ladder: measure how strongly task state should influence an LLM agent."""


app.command("generate")(cmd_generate.generate)
app.command("run")(cmd_run.run)
app.command("validate")(cmd_run.validate)
app.command("demo")(cmd_run.demo)
app.command("cost")(cmd_cost.cost)
app.command("score")(cmd_score.score)
app.command("report")(cmd_report.report)
app.command("show")(cmd_show.show)
app.command("view")(cmd_view.view)
app.add_typer(serve_app, name="serve")


def main() -> None:
    app()
