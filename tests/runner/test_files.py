"""runner.files: the one crash-safe appender and the one atomic replace."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from runner.files import JsonlAppender, write_atomic


def test_a_torn_last_line_is_ended_before_the_next(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":')  # a kill tore the second line
    with JsonlAppender(path) as out:
        out.write(b'{"c":3}\n')
    assert path.read_bytes().split(b"\n") == [b'{"a":1}', b'{"b":', b'{"c":3}', b""]
    with JsonlAppender(path) as out:  # a whole file is left as it is
        out.write(b'{"d":4}\n')
    assert path.read_bytes().endswith(b'{"c":3}\n{"d":4}\n')


def test_a_planted_link_is_refused_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "outside.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "results.jsonl"
    link.symlink_to(victim)
    with pytest.raises(OSError) as e:
        JsonlAppender(link)
    assert e.value.errno == errno.ELOOP and victim.read_text() == "keep me\n"


def test_a_failed_write_is_cut_back_to_the_last_whole_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "log.jsonl"
    out = JsonlAppender(path)
    out.write(b'{"a":1}\n')
    real = os.write
    calls = {"n": 0}

    def half_then_full(fd: int, data: bytes | memoryview) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real(fd, bytes(data)[:3])  # a short write, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full)  # runner.files's os is this module
    with pytest.raises(OSError, match="No space left") as e:
        out.write(b'{"b":2}\n')
    assert e.value.filename == str(path)
    monkeypatch.undo()
    out.close()
    assert path.read_bytes() == b'{"a":1}\n'


def test_write_atomic_replaces_whole_and_never_through_a_link(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    write_atomic(path, b"one")
    write_atomic(path, b"two")
    assert path.read_bytes() == b"two" and [p.name for p in tmp_path.iterdir()] == [path.name]
    victim = tmp_path / "outside"
    victim.write_text("keep me")
    path.unlink()
    path.symlink_to(victim)
    write_atomic(path, b"three")  # the link itself is replaced, its target untouched
    assert not path.is_symlink() and path.read_bytes() == b"three"
    assert victim.read_text() == "keep me"
