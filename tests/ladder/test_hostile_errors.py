"""Every error line the command line prints goes through the one terminal-escaping function
(#47, ``ladder.errors.shown``): a hostile option value or file name carried by click's own
``BadParameter`` / ``UsageError`` message, by a typo'd command or by a command's refusal is
shown with its control characters (OSC/ESC, C1, bidi, zero-width) as escapes, never obeyed,
one ``error:`` line, exit 2, no traceback."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app
from ladder.errors import shown
from runner.redact import add_secret, clear_secrets

# an OSC retitle, a C1 CSI, a right-to-left override, a zero-width space and a word joiner
HOSTILE = "x\x1b]0;pwned\x07\x9b2J\u202eevil\u200b\u2060"
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u200b", "\u2060")


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def _one_escaped_line(argv: list[str], echoed: bool = True) -> str:
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    err = result.stderr
    assert "Traceback" not in err
    assert [c for c in RAW if c in err] == []
    (line,) = err.strip().splitlines()
    assert line.startswith("error: ")
    if echoed:
        assert "\\x1b]0;pwned" in line and "\\u202e" in line and "\\u200b" in line
    return line


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--model", "scripted/perfect", "--concurrency", HOSTILE],  # not an int
        ["generate", "--density", HOSTILE],  # not a float
        ["validate", "--rate", HOSTILE],
        ["serve", "scripted", "--port", HOSTILE],  # a subcommand's BadParameter
    ],
)
def test_a_hostile_number_is_one_line_with_no_raw_control(argv: list[str]) -> None:
    _one_escaped_line(argv, echoed=False)  # typer's message does not quote the value


@pytest.mark.parametrize(
    "argv",
    [
        ["run", f"--{HOSTILE}"],  # click: no such option
        ["serve", "scripted", f"--{HOSTILE}"],
        [HOSTILE],  # click: no such command
        ["domain", HOSTILE],  # a group's: no such command
    ],
)
def test_a_hostile_value_in_clicks_message_is_escaped(argv: list[str]) -> None:
    _one_escaped_line(argv)


def test_a_hostile_file_name_is_escaped(tmp_path: Path) -> None:
    planted = tmp_path / HOSTILE
    planted.write_text("not a run\n")  # a file where a run directory belongs
    _one_escaped_line(["score", str(planted)])
    _one_escaped_line(["validate", str(tmp_path / f"{HOSTILE}.toml")])


def test_shown_redacts_then_escapes() -> None:
    add_secret("sk-live-0123456789")
    try:
        out = shown("key SK-LIVE-0123456789 \x1b[2J\u200f")
    finally:
        clear_secrets()
    assert out == "key [redacted] \\x1b[2J\\u200f"
