"""The run directory's logs: append-only JSON lines, one file per cell, read back tolerantly.

Layout of a run directory::

    DIR/manifest.json           the grid, versions, git revision, start time
    DIR/logs/<cell-slug>.jsonl  one EpisodeRecord per finished episode, appended and flushed
    DIR/results.jsonl           the streamed cell and contrast results
    DIR/cache/                  compile and matcher caches (gate arms)

A write is one ``os.write`` of a whole line on an ``O_APPEND`` descriptor
(:mod:`runner.rundir.files`), so a kill -9 leaves at most one truncated last line, which
the reader drops and reports. Episodes that ended on an
infrastructure failure are logged too (with their termination reason); a resumed run retries
them, and the reader keeps the last record of each (cell, seed).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from protocol.records import SCHEMA_VERSION, CellKey, EpisodeRecord
from runner.rundir.files import JsonlAppender

__all__ = [
    "LOGS",
    "LogReport",
    "LogWriter",
    "NewerSchemaError",
    "checked_record",
    "decode_record",
    "log_files",
    "read_log_file",
    "read_logs",
    "read_record",
    "scan_log",
]

LOGS = "logs"
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(EpisodeRecord)


def decode_record(line: bytes) -> EpisodeRecord:
    """One log line as a record; a version-1 line (compile graph keyed by step id) is read
    into the version-2 shape (a list of steps)."""
    try:
        return _decoder.decode(line)
    except msgspec.ValidationError:
        data = msgspec.json.decode(line)
        if not isinstance(data, dict) or data.get("schema_version", 1) != 1:
            raise
        info = data.get("compile")
        if not isinstance(info, dict) or not isinstance(info.get("graph"), dict):
            raise
        info["graph"] = [{"id": k, **v} for k, v in info["graph"].items()]
        return msgspec.convert(data, EpisodeRecord)


class NewerSchemaError(ValueError):
    """A log written by a newer state-ladder than this one."""


class LogWriter:
    """Appends records to per-cell files (:class:`~runner.rundir.files.JsonlAppender`:
    one write per episode; a disk-full write cut back to the last whole record)."""

    def __init__(self, run_dir: Path) -> None:
        self.dir = run_dir / LOGS
        self.dir.mkdir(parents=True, exist_ok=True)
        self._files: dict[str, JsonlAppender] = {}
        self._buf = bytearray()

    def _file(self, cell: CellKey) -> JsonlAppender:
        slug = cell.slug()
        out = self._files.get(slug)
        if out is None:
            out = self._files[slug] = JsonlAppender(self.dir / f"{slug}.jsonl")
        return out

    def write(self, record: EpisodeRecord) -> None:
        _encoder.encode_into(record, self._buf)
        self._buf.extend(b"\n")
        try:
            self._file(record.cell).write(self._buf)
        finally:
            self._buf.clear()

    def close(self) -> None:
        for out in self._files.values():
            out.close()
        self._files.clear()

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class LogReport:
    """What reading a log directory found besides the records."""

    files: int = 0
    records: int = 0
    corrupt: list[str] = field(default_factory=list)  # "file:line: reason"
    truncated: list[str] = field(default_factory=list)  # a last line without its newline
    duplicates: int = 0  # earlier records of a (cell, seed) superseded by a later one


def _lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    data = path.read_bytes()
    lines = data.split(b"\n")
    last = len(lines) - 1
    for i, line in enumerate(lines):
        if line.strip():
            yield i + 1, line, i == last  # the last piece has no newline: truncated


def log_files(run_dir: Path) -> list[Path]:
    """The episode log files under ``run_dir`` (or a logs/ dir itself), sorted."""
    base = run_dir / LOGS if (run_dir / LOGS).is_dir() else run_dir
    return [
        p for p in sorted(base.rglob("*.jsonl")) if p.name not in ("results.jsonl", "helpers.jsonl")
    ]


def checked_record(line: bytes, where: str) -> EpisodeRecord:
    """:func:`decode_record`, and :class:`NewerSchemaError` for a record of a newer schema
    version (msgspec's errors for a bad line)."""
    rec = decode_record(line)
    if rec.schema_version > SCHEMA_VERSION:
        raise NewerSchemaError(
            f"{where}: log schema version {rec.schema_version} is newer than this "
            f"state-ladder's ({SCHEMA_VERSION}); upgrade state-ladder to score it"
        )
    return rec


def read_logs(
    run_dir: Path, report: LogReport | None = None
) -> dict[tuple[str, int], EpisodeRecord]:
    """Every (cell slug, seed) -> its last record under ``run_dir`` (or a logs/ dir itself).

    Corrupt lines are counted in ``report``, never raised. A record of a newer schema
    version raises :class:`NewerSchemaError`: scoring it with older rules would be wrong.
    """
    report = report if report is not None else LogReport()
    out: dict[tuple[str, int], EpisodeRecord] = {}
    for path in log_files(run_dir):
        read_log_file(path, report, out)
    return out


def read_log_file(path: Path, report: LogReport, out: dict[tuple[str, int], EpisodeRecord]) -> None:
    """The records of one log file into ``out`` (a later record of a key replaces it)."""
    report.files += 1
    for lineno, line, truncated in _lines(path):
        where = f"{path.name}:{lineno}"
        try:
            rec = checked_record(line, where)
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            (report.truncated if truncated else report.corrupt).append(f"{where}: {e}")
            continue
        key = (rec.cell.slug(), rec.spec.seed)
        if key in out:
            report.duplicates += 1
        out[key] = rec
        report.records += 1


@dataclass(frozen=True)
class LogLine:
    """One complete line of a log file: where it lies and what it decoded to."""

    offset: int  # byte offset of the line in its file
    length: int  # bytes, without the newline
    record: EpisodeRecord | None  # None: the line is corrupt
    error: str | None = None


def scan_log(path: Path, start: int = 0) -> tuple[list[LogLine], int]:
    """The complete lines of one log file from byte ``start`` (a line start) on, and the
    offset after the last complete line (where a later scan resumes). A last line without
    its newline (an episode being written, or a kill) is left for the next scan."""
    with path.open("rb") as f:
        f.seek(start)
        data = f.read()
    end = data.rfind(b"\n") + 1  # 0 when no complete line
    out: list[LogLine] = []
    pos = 0
    while pos < end:
        nl = data.index(b"\n", pos)
        line = data[pos:nl]
        if line.strip():
            where = f"{path.name}@{start + pos}"
            try:
                out.append(LogLine(start + pos, nl - pos, checked_record(line, where)))
            except (msgspec.DecodeError, msgspec.ValidationError) as e:
                out.append(LogLine(start + pos, nl - pos, None, f"{where}: {e}"))
        pos = nl + 1
    return out, start + end


def read_record(path: Path, offset: int, length: int) -> EpisodeRecord:
    """The record on the line at ``offset`` (as :func:`scan_log` found it)."""
    with path.open("rb") as f:
        f.seek(offset)
        line = f.read(length)
    return checked_record(line, f"{path.name}@{offset}")
