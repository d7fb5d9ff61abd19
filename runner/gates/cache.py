"""The helpers' disk caches and single flight (shared by the compiler and the matcher).

* :class:`SingleFlight`: concurrent requests for one key share one call.
* :class:`CompileStore`: one checksummed JSON file per compile key, written atomically.
* :class:`MatcherStore`: matcher answers as checksummed JSON lines in 256 shards.

An entry whose checksum fails, that does not parse, or that was copied under another key is
dropped (``corrupt`` counts it) and its answer recomputed: never trusted.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import msgspec
import orjson

from protocol.records import CallRecord, MatcherOutcome
from runner.files import MAX_FILE_BYTES, JsonlAppender, lines, read_regular, write_atomic

__all__ = [
    "CompileStore",
    "HelperStats",
    "MatchAnswer",
    "MatcherOutcome",
    "MatcherStore",
    "SingleFlight",
    "digest",
]

T = TypeVar("T")


@dataclass
class HelperStats:
    """What the compiler and the matcher did in one run (printed at its end)."""

    compile_requests: int = 0  # compile() calls (one per gate episode, plus precompile keys)
    compile_calls: int = 0  # chat requests made for compiles (two per fresh key)
    compile_saved: int = 0  # compile() served without a request (memory, disk, shared)
    matcher_requests: int = 0  # match() calls that needed a matcher answer
    matcher_calls: int = 0  # chat requests made for the matcher, retries included
    matcher_saved: int = 0  # match() served without a request (memory, disk, shared)
    matcher_retries: int = 0  # follow-ups after a malformed reply
    matcher_malformed: int = 0  # answers still malformed after the retry
    disk_hits: int = 0
    corrupt: int = 0  # cache entries dropped (bad checksum or unreadable)

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def digest(obj: object) -> str:
    """SHA-256 of the canonical JSON of ``obj`` (sorted keys)."""
    return hashlib.sha256(orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)).hexdigest()


class SingleFlight(Generic[T]):
    """Concurrent ``run(key, fn)`` calls for one key share one ``fn()``.

    The first caller runs ``fn``; the others await its future and get ``shared=True``. A
    failure reaches every waiter; the key is then free again, so a later call retries. If the
    runner is cancelled, the waiters start over (one of them becomes the runner)."""

    def __init__(self) -> None:
        self._flights: dict[str, asyncio.Future[T]] = {}

    def __len__(self) -> int:
        return len(self._flights)

    async def run(self, key: str, fn: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        while (fut := self._flights.get(key)) is not None:
            try:
                return await asyncio.shield(fut), True
            except asyncio.CancelledError:
                if not fut.cancelled():
                    raise  # this waiter was cancelled, not the flight
        fut = asyncio.get_running_loop().create_future()
        self._flights[key] = fut
        try:
            value = await fn()
        except asyncio.CancelledError:
            fut.cancel()
            raise
        except BaseException as e:
            fut.set_exception(e)
            fut.exception()  # retrieved: no "never retrieved" warning when nobody waits
            raise
        else:
            fut.set_result(value)
            return value, False
        finally:
            del self._flights[key]


class CompileStore:
    """``DIR/<key digest>.json``: ``{"checksum", "payload": {"key", ...}}`` per compile key."""

    text_fields = ("graph_reply", "revision_reply")

    def __init__(self, directory: Path, stats: HelperStats, root: Path | None = None) -> None:
        self.dir = directory
        self.stats = stats
        self.root = root  # the run directory: folders below it opened without links (#47)

    def path(self, key_digest: str) -> Path:
        return self.dir / f"{key_digest}.json"

    def load(self, key_digest: str) -> dict[str, object] | None:
        """The stored payload (its ``key`` checked against the file's name), or None."""
        path = self.path(key_digest)
        try:
            # a regular file, never through a link, bounded (#47): anything else is corrupt
            data = orjson.loads(read_regular(path, cap=MAX_FILE_BYTES, follow=False))
            payload = data["payload"]
            if data["checksum"] != digest(payload):
                raise ValueError("checksum mismatch")
            if digest(payload["key"])[:40] != key_digest:  # a file copied under another key
                raise ValueError("stored key does not match the file's key")
            if not isinstance(payload, dict):
                raise TypeError("payload is not an object")
            if not all(isinstance(payload.get(k), str) for k in self.text_fields):
                raise TypeError("a stored reply is missing")
            if not isinstance(payload.get("calls", []), list):
                raise TypeError("stored calls are not a list")
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            self.stats.corrupt += 1
            path.unlink(missing_ok=True)
            return None
        self.stats.disk_hits += 1
        return payload

    def store(self, key_digest: str, payload: Mapping[str, object]) -> None:
        data = {"checksum": digest(payload), "payload": dict(payload)}
        body = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
        write_atomic(self.path(key_digest), body, root=self.root)


class MatchAnswer(msgspec.Struct, frozen=True):
    """The matcher's resolution of one user turn."""

    step: str | None
    redo: bool
    malformed: bool = False  # still unparseable after the correction request
    corrected: bool = False  # parsed only after the correction request
    replies: tuple[str, ...] = ()  # corrected or malformed: the raw replies, bounded (#41)

    @property
    def outcome(self) -> MatcherOutcome:
        """answered (a step), null (no step), corrected (parsed after the correction
        request), or malformed (unparseable after it; resolves to no step)."""
        if self.malformed:
            return "malformed"
        if self.corrected:
            return "corrected"
        return "null" if self.step is None else "answered"


class MatcherStore:
    """Matcher answers in memory, appended to ``DIR/<2 hex>.jsonl`` (256 shards), each with
    the requests that made it (``calls``: their tokens are what a turn served from the cache
    still needed; lines written before ``calls`` have none)."""

    def __init__(self, directory: Path, stats: HelperStats, root: Path | None = None) -> None:
        self.dir = directory
        self.stats = stats
        self.root = root  # the run directory: folders below it opened without links (#47)
        self.answers: dict[str, MatchAnswer] = {}
        self.calls: dict[str, tuple[CallRecord, ...]] = {}
        self.on_disk: set[str] = set()  # keys read back from disk
        self._shards: set[str] = set()  # shards read from disk

    def _shard(self, key: str) -> Path:
        return self.dir / f"{key[:2]}.jsonl"

    def get(self, key: str) -> MatchAnswer | None:
        """The answer in memory, else in its shard on disk (read once per shard)."""
        found = self.answers.get(key)
        if found is not None:
            return found
        shard = key[:2]
        if shard not in self._shards:
            self._shards.add(shard)
            self._read_shard(self._shard(key), shard)
        return self.answers.get(key)

    def _read_shard(self, path: Path, shard: str) -> None:
        try:  # a regular file, never through a link, a line at a time (#47)
            for line in lines(path):
                self._read_row(line.text)
        except FileNotFoundError:
            return
        except OSError:  # a planted link or FIFO: none of it is read
            self.stats.corrupt += 1

    def _read_row(self, line: bytes | None) -> None:
        try:
            if line is None:
                raise ValueError("over the line cap")
            row = orjson.loads(line)
            if row["c"] != digest(_body(row))[:16]:
                raise ValueError("checksum mismatch")
            answer = MatchAnswer(
                row["step"],
                bool(row["redo"]),
                bool(row["malformed"]),
                bool(row.get("corrected", False)),
                tuple(str(x) for x in row.get("replies", ())),
            )
            calls = msgspec.convert(row.get("calls", []), tuple[CallRecord, ...])
            key = str(row["k"])
        except (ValueError, KeyError, TypeError, msgspec.ValidationError):
            self.stats.corrupt += 1
            return
        self.answers[key] = answer
        self.calls[key] = calls
        self.on_disk.add(key)

    def store(self, key: str, answer: MatchAnswer, calls: tuple[CallRecord, ...] = ()) -> None:
        self.answers[key] = answer
        self.calls[key] = calls
        row: dict[str, object] = {
            "k": key,
            "step": answer.step,
            "redo": answer.redo,
            "malformed": answer.malformed,
        }
        if answer.corrected:
            row["corrected"] = True
        if calls:
            row["calls"] = msgspec.to_builtins(calls)
        if answer.replies:
            row["replies"] = list(answer.replies)
        row["c"] = digest(_body(row))[:16]
        line = orjson.dumps(row) + b"\n"
        path = self._shard(key)
        if self.root is None:
            path.parent.mkdir(parents=True, exist_ok=True)
        with JsonlAppender(
            path, sync=False, root=self.root
        ) as f:  # a torn last line (a kill) is ended first
            f.write(line)


def _body(row: Mapping[str, object]) -> list[object]:
    """What a matcher line's checksum covers (``corrected`` and ``calls`` only where written:
    lines of older runs keep their checksums)."""
    body = [row["k"], row["step"], row["redo"], row["malformed"]]
    body += [row[k] for k in ("corrected", "calls", "replies") if k in row]
    return body
