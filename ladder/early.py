"""A command's one-line refusal of plainly bad input, before the command loads (#49 item 6).

``ladder score /no/such/dir``, ``ladder run --trials 0`` or ``ladder generate --steps 99``
would otherwise import the command's module and its dependencies (the readers, the scorers,
the endpoint: up to a second of CPU) only to print one line. :data:`EARLY` holds, per command, a check of its raw
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


def _last_int(args: Sequence[str], *names: str) -> int | None:
    """The last value given to the option of these ``names`` (``--opt N``, ``--opt=N``,
    ``-o N``), as click takes it; None when absent or not an integer."""
    value: str | None = None
    for i, token in enumerate(args):
        if token == "--":
            break
        name, eq, inline = token.partition("=")
        if name not in names:
            continue
        if eq:
            value = inline
        elif i + 1 < len(args):
            value = args[i + 1]
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


def _logdir(args: Sequence[str]) -> None:
    """``score``, ``report``, ``show``, ``cost``, ``view``: LOGDIR must be a directory."""
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


# protocol.episode.versions' MIN_STEPS and MAX_STEPS, which cannot be imported without the
# protocol (its package imports the generator); tests/ladder/test_startup.py holds them equal
_MIN_STEPS, _MAX_STEPS = 5, 18


def _steps(args: Sequence[str]) -> None:
    """``generate``: ``--steps`` / ``-S`` within the generator's bounds
    (``protocol.episode.versions.check_spec``'s line)."""
    steps = _last_int(args, "--steps", "-S")
    if steps is not None and not _MIN_STEPS <= steps <= _MAX_STEPS:
        raise UsageError(
            f"steps must be between {_MIN_STEPS} and {_MAX_STEPS} (got {steps}): "
            f"traps need {_MIN_STEPS}, a domain has {_MAX_STEPS}"
        )


EARLY: dict[str, Callable[[Sequence[str]], None]] = {
    "generate": _steps,
    "score": _logdir,
    "report": _logdir,
    "show": _logdir,
    "cost": _logdir,
    "view": _logdir,
    "validate": _grid_file,
    "run": _trials,
}


def early_check(command: str, args: Sequence[str]) -> None:
    """Raise the one-line error ``ladder COMMAND ARGS`` would print, where :data:`EARLY`
    can tell without loading the command; otherwise nothing."""
    check = EARLY.get(command)
    if check is not None and _HELP.isdisjoint(args):
        check(args)
