"""tau2gate's one reader and writer (#47): a planted FIFO, a link to a device, a file over
its cap are refused at once (never a hang or a gigabyte); a link planted where a file is
written is replaced, never written through; the rules file of ``--rules`` is read by it;
nothing the gate writes or prints holds a configured key (the ``--api-key`` value or a
``*_API_KEY`` variable's, in any case) or a ``Bearer`` value."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from scoring.redact import REDACTED, add_secret, clear_secrets
from tau2gate.adapter import cli
from tau2gate.adapter.cli import _BadInput, _load_rules
from tau2gate.files import NotRegularFile, read_regular, write_atomic


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_bytes(b"x" * 10)
    assert read_regular(path) == b"x" * 10
    assert read_regular(path, cap=10) == b"x" * 10


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "rules.json"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile, match="not a regular file"):
        read_regular(fifo)


def test_a_link_to_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "rules.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(NotRegularFile, match="not a regular file"):
        read_regular(link)


def test_a_file_over_its_cap_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 11)
    with pytest.raises(NotRegularFile, match="over 10 bytes"):
        read_regular(path, cap=10)


def test_a_planted_name_is_shown_not_obeyed(tmp_path: Path) -> None:
    fifo = tmp_path / "r\x1b]0;x\x07.json"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile) as refused:
        read_regular(fifo)
    assert "\x1b" not in str(refused.value) and "\\x1b" in str(refused.value)


def test_a_write_replaces_a_planted_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    target = tmp_path / "out" / "summary.jsonl"
    target.parent.mkdir()
    target.symlink_to(outside)
    write_atomic(target, b"new\n")
    assert outside.read_text() == "keep"
    assert not target.is_symlink() and target.read_bytes() == b"new\n"
    assert [p.name for p in target.parent.iterdir()] == ["summary.jsonl"]  # no temp left


def test_the_rules_file_goes_through_the_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "rules.json"
    os.mkfifo(fifo)
    with pytest.raises(_BadInput, match=r"cannot read rules .*rules\.json"):
        _load_rules(str(fifo), "airline")


KEY = "sk-Gate47SecretKey0123"


@pytest.fixture
def _keys() -> Iterator[None]:
    clear_secrets()
    yield
    clear_secrets()


@pytest.mark.usefixtures("_keys")
def test_a_file_the_gate_writes_holds_no_key(tmp_path: Path) -> None:
    add_secret(KEY)
    out = tmp_path / "compiled_rules.json"
    write_atomic(out, f"a reply quoting {KEY}, {KEY.lower()} and Bearer tok-123456789".encode())
    text = out.read_text()
    assert KEY not in text and KEY.lower() not in text and "tok-123456789" not in text
    assert text.count(REDACTED) == 3


@pytest.mark.usefixtures("_keys")
def test_the_gate_prints_no_key_from_its_flag_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env_key = "sk-FromTheEnvironment9876"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    monkeypatch.setattr(cli, "require_tau2", lambda module="tau2.registry": None)
    rules = tmp_path / f"{KEY.lower()}-{env_key.upper()}.json"  # quoted in the error line
    assert cli.main(["run", "--scripted", "--api-key", KEY, "--rules", str(rules)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot read rules") and err.count(REDACTED) == 2
    for key in (KEY, env_key):
        assert key not in err and key.lower() not in err and key.upper() not in err
    with pytest.raises(SystemExit):  # a parse error's line, before the flag is parsed
        cli.main(["run", f"--api-key={KEY}", "--bogus", KEY.lower()])
    err = capsys.readouterr().err
    assert KEY.lower() not in err and REDACTED in err
    write_atomic(tmp_path / "out.txt", f"{KEY} {env_key.lower()}".encode())  # registered now
    assert (tmp_path / "out.txt").read_text() == f"{REDACTED} {REDACTED}"
