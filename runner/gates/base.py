"""What the gates' two helpers share: the run's helper log (``OUT/helpers.jsonl``), the
records of a call shared by an episode that did not make it, and their common state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from protocol.records import CallRecord, HelperLogLine
from runner.client.endpoint import ChatEndpoint
from runner.files import JsonlAppender, lines
from runner.gates.cache import HelperStats
from runner.grid.expand import Grid

__all__ = ["Helper", "HelperLog", "read_helper_log", "shared_calls"]


class HelperLog:
    """``OUT/helpers.jsonl``: every helper request the run made, once, with its tokens (a
    ``compile`` line per compile, a ``matcher`` line per matcher answer); the grid's actual
    helper spend, however many episodes shared each."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._encoder = msgspec.json.Encoder()

    def write(self, line: HelperLogLine) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with JsonlAppender(self.path, sync=False) as f:  # never through a symlink
            f.write(self._encoder.encode(line) + b"\n")


def read_helper_log(path: Path) -> tuple[list[HelperLogLine], int]:
    """The lines of a helper log (none when it does not exist) and how many were unreadable
    (a kill mid-write leaves at most the last one cut; a line over the cap, or a log that is
    a link or not a regular file, is not read: the run directory may be hostile)."""
    decoder = msgspec.json.Decoder(HelperLogLine)
    found: list[HelperLogLine] = []
    bad = 0
    try:
        for line in lines(path):
            try:
                if line.text is None:
                    raise msgspec.DecodeError("over the line cap")
                if line.text.strip():
                    found.append(decoder.decode(line.text))
            except msgspec.DecodeError:
                bad += 1
    except FileNotFoundError:
        return [], 0
    except OSError:  # a link or another planted entry
        return [], 1
    return found, bad


def shared_calls(calls: Sequence[CallRecord]) -> list[CallRecord]:
    """``calls`` as logged by an episode that did not make them (tokens kept)."""
    return [msgspec.structs.replace(c, cached=True, shared=True) for c in calls]


class Helper:
    """The state the compiler and the matcher share: the grid, the endpoints by name, the
    run's helper counters and its helper log."""

    def __init__(
        self,
        grid: Grid,
        out_dir: Path,
        endpoints: Mapping[str, ChatEndpoint],
        stats: HelperStats,
    ) -> None:
        self.grid = grid
        self.endpoints = endpoints
        self.stats = stats
        self.log = HelperLog(out_dir / "helpers.jsonl")
