"""A command's one-line refusal of plainly bad input, before the command loads (#49 item 6).

``ladder score /no/such/dir`` or ``ladder run --trials 0`` would otherwise import the
command's module and its dependencies (the readers, the scorers, the endpoint: about a second
of CPU) only to print one line. :data:`EARLY` holds, per command, a check of its raw
arguments that needs nothing but the standard library; :class:`ladder.app.OneLineErrors` runs
it before the command (and the plugins) load. A check refuses only what the command itself
would refuse, with the command's own line (a test holds the two equal); anything it cannot
read with certainty (``-h``, an option before the first argument, a non-integer) it leaves to
the command.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ladder.errors import UsageError
from runner.rundir.errors import check_logdir

__all__ = ["EARLY", "early_check"]

_HELP = frozenset({"-h", "--help"})


def _first_argument(args: Sequence[str]) -> str | None:
    """The command's first positional argument, when it is the first token (no option can
    have taken it as its value)."""
    if not args or args[0].startswith("-"):
        return None
    return args[0]


def _last_int(args: Sequence[str], option: str) -> int | None:
    """The last value given to ``option`` (``--opt N`` or ``--opt=N``), as click takes it;
    None when absent or not an integer."""
    value: str | None = None
    for i, token in enumerate(args):
        if token == "--":
            break
        if token == option and i + 1 < len(args):
            value = args[i + 1]
        elif token.startswith(option + "="):
            value = token[len(option) + 1 :]
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


def _logdir(args: Sequence[str]) -> None:
    """``score``, ``report``, ``show``, ``cost``: LOGDIR must be a directory."""
    first = _first_argument(args)
    if first is not None:
        check_logdir(Path(first))


def _grid_file(args: Sequence[str]) -> None:
    """``validate``: the grid file must exist (``runner.grid.expand.load_grid``'s line)."""
    first = _first_argument(args)
    if first is None:
        return
    try:
        Path(first).stat()
    except OSError as e:
        raise UsageError(f"cannot read grid {first}: {e.strerror or e}") from None


def _trials(args: Sequence[str]) -> None:
    """``run``: ``--trials`` at least 1 (``runner.grid.expand``'s check of the command line)."""
    trials = _last_int(args, "--trials")
    if trials is not None and trials < 1:
        raise UsageError(f"command line: trials must be at least 1 (got {trials})")


EARLY: dict[str, Callable[[Sequence[str]], None]] = {
    "score": _logdir,
    "report": _logdir,
    "show": _logdir,
    "cost": _logdir,
    "validate": _grid_file,
    "run": _trials,
}


def early_check(command: str, args: Sequence[str]) -> None:
    """Raise the one-line error ``ladder COMMAND ARGS`` would print, where :data:`EARLY`
    can tell without loading the command; otherwise nothing."""
    check = EARLY.get(command)
    if check is not None and _HELP.isdisjoint(args):
        check(args)
