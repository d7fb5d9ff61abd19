"""``DIR/results.jsonl``: streamed (provisional) result lines, then the run's final lines.

While a run goes on, the streaming scorer's cell and contrast lines are appended as cells and
ladders complete, each with ``status: "provisional"`` (a contrast's Holm family is then one
ladder; a cell line is written again when a later record lands in a complete cell). When the
run ends, :func:`finalize_results` rescores the whole run directory (exactly what
``ladder score --json`` prints), marks every line already in the file ``superseded`` and
appends the new lines with ``status: "final"``: one rewrite per run, atomic (temporary file,
fsync, ``os.replace``), so a kill leaves either the old file or the new one. After a resume
or a grid change the earlier runs' final lines are superseded the same way.

Which lines to use: the ``final`` ones (:func:`read_results` returns them; while no run has
finished, the last provisional line of each cell and contrast). See :mod:`scoring.results.lines`.
A line that cannot be read (a write torn by a kill) is kept as it is and skipped by readers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec
import orjson

from runner.files import MAX_LINE_BYTES, NotRegularFile, read_regular, write_atomic
from scoring.results.lines import ResultLine, current_lines, decode_line, line_json, with_status

__all__ = ["RESULTS", "encode_line", "finalize_results", "holds_final", "read_results"]

RESULTS = "results.jsonl"


def encode_line(line: ResultLine) -> bytes:
    """One JSON line of ``results.jsonl`` (newline included)."""
    return orjson.dumps(line_json(line)) + b"\n"


def _read(path: Path) -> tuple[list[ResultLine], list[bytes]]:
    """The readable lines of *path* and every raw line (in order)."""
    try:
        data = read_regular(path, cap=MAX_LINE_BYTES, follow=False)
    except FileNotFoundError:
        return [], []
    except NotRegularFile:  # a planted link or FIFO: nothing of it is read (nor kept)
        return [], []
    raw = [x for x in data.split(b"\n") if x.strip()]
    lines: list[ResultLine] = []
    for x in raw:
        try:
            lines.append(decode_line(x))
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
    return lines, raw


def read_results(run_dir: Path | str) -> list[ResultLine]:
    """The result lines to use from ``run_dir/results.jsonl`` (see the module docstring);
    ``run_dir`` a path or a string."""
    return current_lines(_read(Path(run_dir) / RESULTS)[0])


def holds_final(run_dir: Path, final: Sequence[ResultLine]) -> bool:
    """Whether ``run_dir/results.jsonl``'s final lines are exactly ``final`` (as written
    now): a finished run rerun with nothing to do then appends nothing (#49)."""
    lines, _ = _read(run_dir / RESULTS)
    have = sorted(encode_line(x) for x in lines if x.status == "final")
    return bool(have) and have == sorted(encode_line(x) for x in with_status(final, "final"))


def _superseded(raw: bytes) -> bytes:
    try:
        line = decode_line(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return raw  # a torn or foreign line stays as it was
    return encode_line(msgspec.structs.replace(line, status="superseded")).rstrip(b"\n")


def finalize_results(run_dir: Path, final: Sequence[ResultLine]) -> Path:
    """Mark every line of ``run_dir/results.jsonl`` superseded and append *final* (marked
    ``final``); one atomic rewrite. Returns the file's path."""
    path = run_dir / RESULTS
    _, raw = _read(path)
    body = b"".join(_superseded(x) + b"\n" for x in raw)
    body += b"".join(encode_line(x) for x in with_status(final, "final"))
    write_atomic(path, body)
    return path
