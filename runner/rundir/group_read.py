"""One log file of a configuration group read for scoring: the reading that ``ladder score``'s
and ``ladder report``'s workers (:func:`runner.rundir.rescore._score_group`) and the viewer's
index (:func:`runner.viewer.entries.index_file`) share (#50). Each then scores what it read with
:func:`scoring.results.offline.score_records`, one episode cache and one replay cache for the
group's files (the arms of one seed share one regenerated episode), so a faster reader or a
faster scorer serves all three.

A file is read a line at a time (:func:`runner.files.lines`: a regular file, a per-line cap)
from a byte offset where a line starts, its line numbers resuming from the lines read before
it; each record keeps the offset and length of its line (the viewer reads an episode back from
there). A bad line is counted in the file's :class:`runner.rundir.logs.LogReport` as ``ladder
score`` reports it (``<file>:<line>: <reason>``), never raised; a record of a newer schema
raises :class:`runner.rundir.logs.NewerSchemaError`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, NamedTuple, TypeVar

import msgspec

from protocol.records import EpisodeRecord
from runner.files import MAX_LINE_BYTES, lines
from runner.rundir.logs import LogReport, checked_record
from runner.rundir.served import label_record, served_for_log

__all__ = ["FileRead", "Found", "read_file"]

K = TypeVar("K", bound=Hashable)


class Found(NamedTuple):
    """A record and where its line lies in its file."""

    offset: int  # of the line's first byte
    length: int  # the line's bytes, without its newline
    record: EpisodeRecord


@dataclass
class FileRead(Generic[K]):
    """What reading one log file found."""

    report: LogReport  # files: 1; the records, duplicates and bad lines of this read
    found: dict[K, Found]  # each key's last record, keys in their first line's order
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
) -> FileRead[K]:
    """The records of ``path`` from byte ``start`` (``lineno`` lines lie before it), each
    key's last one (``key``: ``ladder score``'s is :func:`protocol.records.log_key`). ``partial``: a last line without its newline (an episode being written) is left
    for a later read, not reported; otherwise it is read, and reported truncated where it
    does not decode (as :func:`runner.rundir.logs.read_log_file`). ``stop``: no line that
    starts there or after it is read (a file read in parts)."""
    report = LogReport(files=1)
    found: dict[K, Found] = {}
    served = served_for_log(path)
    end = start
    for offset, text, complete, size in lines(path, start):
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
        found[k] = Found(offset, len(text), record)
        report.records += 1
    return FileRead(report, found, end, lineno)
