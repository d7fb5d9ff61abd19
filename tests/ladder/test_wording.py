"""Wording a new user reads (issue 28, item 10): plurals, ``ladder -h`` sentences unbroken,
every command's help whole at 100 columns, no empty ``rewire`` in ``ladder generate``."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from ladder.app import app, load_command, short_help
from scoring.plural import plural
from tests.reliability_kit import ladder

COMMANDS = ("generate", "run", "validate", "demo", "cost", "score", "report", "paraphrase",
            "show", "view", "probe")  # fmt: skip


def test_plural() -> None:
    assert [plural(n, "line") for n in (0, 1, 2)] == ["0 lines", "1 line", "2 lines"]
    assert (
        plural(1, "entry", "entries") == "1 entry" and plural(3, "entry", "entries") == "3 entries"
    )


def test_one_episode_run_is_said_in_the_singular(tmp_path: object) -> None:
    result = ladder("run", "--seeds", "100", "--arms", "raw", "--out", f"{tmp_path}/r", "--no-live")
    assert result.returncode == 0, result.stderr
    assert "done: 1 episode run" in result.stdout
    assert not re.search(r"\b1 (lines|episodes|cells)\b", result.stdout), result.stdout


def _panel_entries(text: str, panel: str) -> dict[str, list[str]]:
    """The rows of a help section (click's plain help, #40): name -> its description's
    wrapped lines."""
    inside = text.split(f"\n{panel}:\n", 1)[1].split("\n\n", 1)[0]
    entries: dict[str, list[str]] = {}
    name = ""
    for row in inside.splitlines():
        m = re.match(r"  (\S+)\s+(.*)$", row)
        if m and not row.startswith("   "):
            name = m.group(1)
            entries[name] = [m.group(2).strip()]
        elif name and row.strip():
            entries[name].append(row.strip())
    return entries


def test_ladder_h_lists_each_command_in_whole_sentences_wrapped_at_the_width() -> None:
    result = ladder("-h", env={"COLUMNS": "100"})
    assert result.returncode == 0
    entries = _panel_entries(result.stdout, "Commands")
    assert set(COMMANDS) <= set(entries)
    for name in COMMANDS:
        lines = entries[name]
        joined = " ".join(lines)
        assert joined.endswith(".") and "  " not in joined, (name, lines)
        width = max(len(x) for e in entries.values() for x in e)
        # wrapped by the terminal's width, not by the docstring's line breaks: every line but
        # the last is (nearly) full
        assert all(len(x) >= width - 16 for x in lines[:-1]), (name, lines)
    assert all(load_command(n).short_help for n in COMMANDS)


def test_short_help_is_the_first_sentence_unwrapped() -> None:
    def f() -> None:
        """One sentence that the docstring
        wraps. A second one."""

    assert short_help(f) == "One sentence that the docstring wraps."


@pytest.mark.parametrize("command", ["run", "generate", "score", "probe", "paraphrase"])
def test_every_option_help_is_whole_at_100_columns(command: str) -> None:
    result = ladder(command, "-h", env={"COLUMNS": "100"})
    assert result.returncode == 0 and "Usage" in result.stdout
    assert "…" not in result.stdout, [x for x in result.stdout.splitlines() if "…" in x]


def test_generate_never_prints_an_empty_rewire() -> None:
    runner = CliRunner()
    for seed in range(1, 13):
        out = runner.invoke(app, ["generate", "--seed", str(seed), "--steps", "5"]).stdout
        (line,) = [x for x in out.splitlines() if x.strip().startswith("cancel ")]
        assert "rewire ;" not in line and "<- []" not in line, line
        assert re.search(r"rewire (-|\S+ <- (none|\[[^\]]+\]))", line), line


def test_the_readmes_episodes_file_is_ignored_by_git_and_activation_is_said_once() -> None:
    import subprocess

    from tests.reliability_kit import REPO

    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "episodes.jsonl"], cwd=REPO, capture_output=True
    )
    assert ignored.returncode == 0  # `ladder generate --seeds ... > episodes.jsonl`
    readme = (REPO / "README.md").read_text()
    assert readme.count("source .venv/bin/activate") == 1
    assert readme.index("source .venv/bin/activate") < readme.index("ladder generate --seed 100")
