"""The run directory's logs: append-only JSON lines, one file per cell, read back tolerantly.

Layout of a run directory::

    DIR/manifest.json           the grid, versions, git revision, start time
    DIR/logs/<cell-slug>.jsonl  one EpisodeRecord per finished episode, appended and flushed
    DIR/results.jsonl           the streamed cell and contrast results
    DIR/cache/                  compile and matcher caches (gate arms)

A write is one ``os.write`` of a whole line on an ``O_APPEND`` descriptor
(:mod:`runner.files`), so a kill -9 leaves at most one truncated last line, which
the reader drops and reports. Episodes that ended on an
infrastructure failure are logged too (with their termination reason); a resumed run retries
them, and the reader keeps the last record of each (cell, seed, trial).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, NamedTuple, TypeVar, overload

import msgspec

from protocol.nesting import json_loads
from protocol.records import SCHEMA_VERSION, CellKey, EpisodeRecord, log_key
from runner.files import BULK_BUFFER, MAX_LINE_BYTES, JsonlAppender, lines, open_regular
from runner.rundir.served import label_record, served_for_log

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

__all__ = [
    "LOGS",
    "FileRead",
    "Found",
    "LogReport",
    "LogWriter",
    "NewerSchemaError",
    "UnreadableRecord",
    "checked_record",
    "decode_record",
    "iter_records",
    "log_files",
    "read_file",
    "read_logs",
    "read_record",
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
        data = json_loads(line)  # a nesting cap: one corrupt line, no RecursionError
        if not isinstance(data, dict) or data.get("schema_version", 1) != 1:
            raise
        info = data.get("compile")
        if not isinstance(info, dict) or not isinstance(info.get("graph"), dict):
            raise
        info["graph"] = [{"id": k, **v} for k, v in info["graph"].items()]
        return msgspec.convert(data, EpisodeRecord)


class UnreadableRecord(ValueError):
    """A record the log reader would reject: never appended (:meth:`LogWriter.write`)."""


class NewerSchemaError(ValueError):
    """A log written by a newer state-ladder than this one."""


class LogWriter:
    """Appends records to per-cell files (:class:`~runner.files.JsonlAppender`:
    one write per episode; a disk-full write cut back to the last whole record)."""

    def __init__(self, run_dir: Path) -> None:
        self.dir = run_dir / LOGS
        self.root = run_dir  # each file opened folder by folder from here, no link followed
        self.dir.mkdir(parents=True, exist_ok=True)
        self._files: dict[str, JsonlAppender] = {}
        self._buf = bytearray()

    def _file(self, cell: CellKey) -> JsonlAppender:
        slug = cell.slug()
        out = self._files.get(slug)
        if out is None:
            out = self._files[slug] = JsonlAppender(self.dir / f"{slug}.jsonl", root=self.root)
        return out

    def write(self, record: EpisodeRecord) -> None:
        """Append ``record``, checked first against the reader's type (decode what is
        encoded): a record the reader would reject is never appended. One whose turns hold
        what the reader rejects is written as an infrastructure failure without its turns
        (termination ``endpoint_error``, the reason in ``error``); one whose cell or spec is
        unreadable raises :class:`UnreadableRecord` (a run cannot log it at all)."""
        try:
            self._encode_checked(record)
        except UnreadableRecord as e:
            failed = msgspec.structs.replace(
                record,
                turns=(),
                compile=None,
                corruptions=(),
                termination="endpoint_error",
                error=f"record unreadable by the log reader: {e}"[:300],
            )
            self._encode_checked(failed)
            record = failed
        try:
            self._file(record.cell).write(self._buf)
        finally:
            self._buf.clear()

    def _encode_checked(self, record: EpisodeRecord) -> None:
        self._buf.clear()
        _encoder.encode_into(record, self._buf)
        try:
            _decoder.decode(self._buf)
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            self._buf.clear()
            raise UnreadableRecord(str(e)) from None
        self._buf.extend(b"\n")

    def close(self) -> None:
        for out in self._files.values():
            out.close()
        self._files.clear()

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


MAX_KEPT_PROBLEMS = 100  # OURS (#47): lines kept of a kind; every one is counted


class Problems:
    """Lines about bad log lines (corrupt, truncated): every one counted (``len``), the
    first :data:`MAX_KEPT_PROBLEMS` kept (iteration, slices). Memory stays flat however many
    bad lines a hostile log holds (3M tiny corrupt lines held 3M messages before, #47)."""

    def __init__(self, items: Iterable[str] = ()) -> None:
        self.kept: list[str] = []
        self.count = 0
        self.extend(items)

    def append(self, item: str) -> None:
        self.count += 1
        if len(self.kept) < MAX_KEPT_PROBLEMS:
            self.kept.append(item)

    def extend(self, items: Iterable[str]) -> None:
        if isinstance(items, Problems):
            self.kept += items.kept[: MAX_KEPT_PROBLEMS - len(self.kept)]
            self.count += items.count
            return
        for item in items:
            self.append(item)

    def __iadd__(self, items: Iterable[str]) -> Problems:
        self.extend(items)
        return self

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[str]:
        return iter(self.kept)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        return self.kept[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Problems):
            return (self.kept, self.count) == (other.kept, other.count)
        return isinstance(other, list) and len(other) == self.count and self.kept == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Problems({self.kept!r}, count={self.count})"


@dataclass
class LogReport:
    """What reading a log directory found besides the records."""

    files: int = 0
    records: int = 0
    corrupt: Problems = field(default_factory=Problems)  # "file:line: reason"
    truncated: Problems = field(default_factory=Problems)  # a last line without its newline
    duplicates: int = 0  # earlier records of a (cell, seed) superseded by a later one
    foreign: list[str] = field(default_factory=list)  # records of another grid, excluded

    def add(self, other: LogReport) -> None:
        """Count what another reading found (one file's, a worker's) in this report."""
        self.files += other.files
        self.records += other.records
        self.duplicates += other.duplicates
        self.corrupt += other.corrupt
        self.truncated += other.truncated


def log_files(run_dir: Path) -> list[Path]:
    """The episode log files under ``run_dir`` (or a logs/ dir itself), sorted. Reading one
    that is not a regular file (a planted link, a FIFO, a device, a folder) raises
    :class:`runner.files.NotRegularFile` naming it: refused in one line, never read."""
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


class Found(NamedTuple):
    """A record and where its line lies in its file."""

    offset: int  # of the line's first byte
    length: int  # the line's bytes, without its newline
    record: EpisodeRecord


@dataclass
class FileRead(Generic[K, V]):
    """What reading one log file found."""

    report: LogReport  # files: 1; the records, duplicates and bad lines of this read
    # each key's last record (its Found, or what read_file's ``value`` made of it), keys in
    # their first line's order
    found: dict[K, V]
    end: int  # the offset after the last line read (where a later read resumes)
    lines: int  # lines read up to ``end`` (blank and bad ones included), from the file's start


def read_file(
    path: Path,
    key: Callable[[EpisodeRecord], K],
    start: int = 0,
    lineno: int = 0,
    *,
    partial: bool = False,
    stop: int | None = None,
    value: Callable[[int, int, EpisodeRecord], V],
) -> FileRead[K, V]:
    """The records of ``path`` from byte ``start`` (``lineno`` lines lie before it), each
    key's last one (``key``: ``ladder score``'s is :func:`protocol.records.log_key`).
    The one reading of a log file: :func:`read_logs`, ``ladder score``'s and ``ladder
    report``'s workers and the viewer's index all read through it (#50); a bad line is
    counted in the report as ``<file>:<line>: <reason>``, never raised; a record of a newer
    schema raises :class:`NewerSchemaError`. ``partial``: a last line without its newline
    (an episode being written) is left for a later read, not reported; otherwise it is
    read, and reported truncated where it does not decode. ``stop``: no line that starts
    there or after it is read (a file read in parts). ``value``: what is kept of each record,
    made from its line's offset and length and the record, in reading order (a superseded
    record's too) as each is read: :class:`Found` keeps the record; a caller that scores
    each record and keeps its score holds no record past its line (#50)."""
    report = LogReport(files=1)
    found: dict[K, V] = {}
    served = served_for_log(path)
    end = start
    for offset, text, complete, size in lines(path, start, buffer=BULK_BUFFER):
        if (partial and not complete) or (stop is not None and offset >= stop):
            break
        lineno += 1
        end = offset + size
        where = f"{path.name}:{lineno}"
        if text is None:
            report.corrupt.append(f"{where}: line over {MAX_LINE_BYTES} bytes")
            continue
        if not text.strip():
            continue
        try:
            record = label_record(checked_record(text, where), served)
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            (report.corrupt if complete else report.truncated).append(f"{where}: {e}")
            continue
        k = key(record)
        if k in found:
            report.duplicates += 1
        found[k] = value(offset, len(text), record)
        report.records += 1
        del record  # gone before the next line's is made, where value kept none of it
    return FileRead(report, found, end, lineno)


def read_logs(
    run_dir: Path, report: LogReport | None = None
) -> dict[tuple[str, int], EpisodeRecord]:
    """Every (cell slug, seed) -> its last record under ``run_dir`` (or a logs/ dir itself);
    a trial after the first of repeated trials is keyed by its trial's slug
    (:func:`protocol.records.log_key`: ``<slug>#t<k>``).

    Corrupt lines are counted in ``report``, never raised. A record of a newer schema
    version raises :class:`NewerSchemaError`: scoring it with older rules would be wrong.
    """
    report = report if report is not None else LogReport()
    out: dict[tuple[str, int], EpisodeRecord] = {}
    for path in log_files(run_dir):
        read = read_file(path, log_key, value=Found)
        report.add(read.report)
        for key, found in read.found.items():  # a later file's record replaces an earlier one
            if key in out:
                report.duplicates += 1
            out[key] = found.record
    return out


def iter_records(
    run_dir: Path, report: LogReport | None = None
) -> Iterator[tuple[tuple[str, int], EpisodeRecord]]:
    """``read_logs(run_dir, report).items()``, the same pairs in the same order with the
    same report, one record in memory at a time (#47): a first pass keeps each key's last
    line (its file and offset, about 150 bytes a key), a second reads those lines again."""
    report = report if report is not None else LogReport()
    files = log_files(run_dir)
    last: dict[tuple[str, int], tuple[int, int]] = {}
    for i, path in enumerate(files):
        report.files += 1
        served = served_for_log(path)
        for lineno, (offset, line, complete, _) in enumerate(lines(path, buffer=BULK_BUFFER), 1):
            if line is None:
                report.corrupt.append(f"{path.name}:{lineno}: line over {MAX_LINE_BYTES} bytes")
                continue
            if not line.strip():
                continue
            try:
                key = log_key(label_record(checked_record(line, f"{path.name}:{lineno}"), served))
            except (msgspec.DecodeError, msgspec.ValidationError) as e:
                bad = report.corrupt if complete else report.truncated
                bad.append(f"{path.name}:{lineno}: {e}")
                continue
            key = (sys.intern(key[0]), key[1])  # one slug string per cell
            if key in last:
                report.duplicates += 1
            last[key] = (i, offset)
            report.records += 1
    for key, (i, offset) in last.items():
        path = files[i]
        line = next(lines(path, offset)).text  # the line the first pass decoded
        if line is not None:
            yield key, label_record(checked_record(line, path.name), served_for_log(path))


def read_record(path: Path, offset: int, length: int) -> EpisodeRecord:
    """The record on the line at ``offset`` (as :func:`read_file` found
    it)."""
    with os.fdopen(open_regular(path), "rb") as f:
        f.seek(offset)
        line = f.read(length)
    return label_record(checked_record(line, f"{path.name}@{offset}"), served_for_log(path))
