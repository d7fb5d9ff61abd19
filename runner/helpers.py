"""The gates' helper calls: the compiler and the matcher, cached, persisted and single-flight.

``Helpers(grid, out_dir, endpoints)`` is built once per run (``runner.cmd_run._helpers``) and
shared by every episode through ``EpisodeContext.helpers``.

Compiler (Section 3.2, Appendices B.1, B.3)
-------------------------------------------
Two requests per key, by the compile model (``ModelConfig.compile_model``, by default the
cell's own model) in that model's regime, with the compiler budget of that regime:

* the graph: ONE user message, the brief followed by a blank line and
  ``COMPILER_GRAPH_PROMPT`` ("The graph prompt (appended to the brief)");
* the revision: one user message, ``render_revision_prompt(steps, revision message)``.

Both are compiled when an episode is prepared (the revision message is fixed by the spec), so
one cache entry holds both and a grid can compile everything up front (:meth:`precompile`).

Compile cache key: the compile model (its label, served name and regime), the domain, the
brief text (hashed), the revision message (hashed), (seed, S, rho) and a hash of the two
compiler prompts (so editing a prompt invalidates old entries). EXCLUDED on purpose, so that
one compile is shared where the paper shares it: the arm and every knob (directive,
enforcement and hybrid arms and their variants share it), the agent model and regime when a
separate compile model is configured (the paper's no-think checkpoint compiles for both
regimes), ``paraphrase_tier`` and ``ambiguous_rate`` (they change neither the brief nor the
revision message), the decoding settings (budgets, temperature, timeout) and the endpoint's
address. Entries live in ``OUT/cache/compile/<key>.json``, one file per key, written
atomically (temporary file, fsync, ``os.replace``), holding the raw replies and a SHA-256
checksum of their canonical encoding; a file that does not parse or whose checksum does not
match is deleted and recomputed. The raw replies are stored, not the parse, so a better
parser applies to old entries.

Matcher (Section 3.2, Appendix B.2)
-----------------------------------
One request per turn that is not a filler or the revision (schedule metadata), with
``render_matcher_prompt`` by the cell's model in its regime and the matcher budget of that
regime. A reply that :func:`protocol.compiled.parse_match` rejects is answered once with
``MATCHER_RETRY`` as a follow-up user turn (the bad reply kept as the assistant turn); a
second bad reply resolves to no step (``None, False``) and counts as malformed. Cache key:
(model label, served name, regime, prompt); the prompt is the step list plus the user's text,
so the directive, enforcement and hybrid arms of one seed share each matcher answer. Entries
are kept in memory and appended to ``OUT/cache/matcher/<2 hex>.jsonl`` (256 shards, one JSON
line per answer with a checksum); a line that does not parse or whose checksum fails is
skipped (counted in ``stats.corrupt``) and its answer recomputed and appended again.

Both caches are single-flight: concurrent requests for one key share one call through an
asyncio future. Every helper call appends a ``CallRecord`` to ``ctx.calls``: the request's
own record, or ``cached=True`` with zero tokens when no request was made for this episode
(memory, disk, or another episode's call in flight). :attr:`Helpers.stats` counts requests
made and saved.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

import anyio
import msgspec
import orjson

from protocol import strings
from protocol.compiled import (
    MATCHER_BYPASS,
    CompiledGraph,
    CompiledRevision,
    parse_graph,
    parse_match,
)
from protocol.compiled import parse_revision as parse_compiled_revision
from protocol.generate import generate
from protocol.records import CallRecord, CellKey, Episode, Turn
from protocol.render import render_matcher_prompt, render_revision_prompt
from runner.arms.base import EpisodeContext
from runner.grid import Grid, ModelConfig, Task

__all__ = [
    "CACHE_VERSION",
    "Compiled",
    "HelperStats",
    "Helpers",
    "SingleFlight",
]

CACHE_VERSION = 1
_PROMPTS_HASH = hashlib.sha256(
    (strings.COMPILER_GRAPH_PROMPT + "\0" + strings.COMPILER_REVISION_PROMPT).encode()
).hexdigest()[:16]
_MATCHER_HASH = hashlib.sha256(
    (strings.MATCHER_PROMPT + "\0" + strings.MATCHER_RETRY).encode()
).hexdigest()[:16]

T = TypeVar("T")
How = Literal["call", "memory", "disk", "shared"]


class _Reply(Protocol):
    content: str
    call: CallRecord


class ChatEndpoint(Protocol):
    async def chat(
        self,
        model: str,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int,
        role: Literal["agent", "matcher", "compiler"] = "agent",
        thinking: bool = False,
        extra: Mapping[str, Any] | None = None,
        temperature: float = 0.0,
    ) -> Any: ...


class Compiled(msgspec.Struct, frozen=True, kw_only=True):
    """One compile: the parsed graph and revision with the replies they came from."""

    model: str  # the compile model's label
    graph: CompiledGraph
    revision: CompiledRevision
    graph_reply: str
    revision_reply: str


@dataclass
class HelperStats:
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


def _digest(obj: object) -> str:
    return hashlib.sha256(orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with tmp.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class _MatchAnswer(msgspec.Struct, frozen=True):
    step: str | None
    redo: bool
    malformed: bool = False


class Helpers:
    """Compiler and matcher for the gate arms of one run (see the module docstring)."""

    def __init__(
        self, grid: Grid, out_dir: Path | str, endpoints: Mapping[str, ChatEndpoint]
    ) -> None:
        self.grid = grid
        self.out = Path(out_dir)
        self.endpoints = endpoints
        self.compile_dir = self.out / "cache" / "compile"
        self.matcher_dir = self.out / "cache" / "matcher"
        self.stats = HelperStats()
        self._compiled: dict[str, Compiled] = {}
        self._matched: dict[str, _MatchAnswer] = {}
        self._shards: set[str] = set()  # matcher shards read from disk
        self._ragged: set[str] = set()  # shards whose last line lacks its newline
        self._on_disk: set[str] = set()  # matcher keys read back from disk
        self._compile_flight: SingleFlight[tuple[Compiled, list[CallRecord]]] = SingleFlight()
        self._match_flight: SingleFlight[tuple[_MatchAnswer, list[CallRecord]]] = SingleFlight()

    # --- models -------------------------------------------------------------------------
    def compile_model(self, cell: CellKey) -> ModelConfig:
        model = self.grid.model(cell.model)
        return self.grid.model(model.compile_model) if model.compile_model else model

    async def _chat(
        self,
        model: ModelConfig,
        messages: list[dict[str, str]],
        role: Literal["matcher", "compiler"],
    ) -> _Reply:
        budgets = (
            self.grid.decoding.matcher_budget
            if role == "matcher"
            else (self.grid.decoding.compiler_budget)
        )
        reply: _Reply = await self.endpoints[model.endpoint].chat(
            model.served_name(),
            messages,
            max_tokens=budgets[model.regime],
            role=role,
            thinking=model.regime == "thinking",
            extra=model.request_extra(),
            temperature=self.grid.decoding.temperature,
        )
        return reply

    def _cached_record(
        self, model: ModelConfig, role: Literal["matcher", "compiler"]
    ) -> CallRecord:
        budgets = (
            self.grid.decoding.matcher_budget
            if role == "matcher"
            else (self.grid.decoding.compiler_budget)
        )
        return CallRecord(role=role, cached=True, max_tokens=budgets[model.regime])

    # --- compiler -----------------------------------------------------------------------
    def compile_key(self, model: ModelConfig, episode: Episode) -> dict[str, object]:
        spec = episode.spec
        return {
            "v": CACHE_VERSION,
            "model": model.name,
            "served": model.served_name(),
            "regime": model.regime,
            "domain": spec.domain,
            "seed": spec.seed,
            "steps": spec.steps,
            "density": spec.density,
            "brief": hashlib.sha256(episode.brief.encode()).hexdigest(),
            "revision": hashlib.sha256(episode.revision.text.encode()).hexdigest(),
            "prompts": _PROMPTS_HASH,
        }

    async def compile(self, cell: CellKey, episode: Episode, ctx: EpisodeContext) -> Compiled:
        """The compiled graph and revision for ``episode`` (cached; see the module docstring)."""
        model = self.compile_model(cell)
        compiled, records = await self._compile(model, episode)
        ctx.calls.extend(records)
        return compiled

    async def _compile(
        self, model: ModelConfig, episode: Episode
    ) -> tuple[Compiled, list[CallRecord]]:
        self.stats.compile_requests += 1
        key = self.compile_key(model, episode)
        digest = _digest(key)[:40]
        cached = [self._cached_record(model, "compiler")] * 2
        hit = self._compiled.get(digest)
        if hit is not None:
            self.stats.compile_saved += 1
            return hit, cached

        async def fresh() -> tuple[Compiled, list[CallRecord]]:
            found = self._compiled.get(digest)
            if found is None:
                found = self._load_compiled(digest, model)
            if found is not None:
                self._compiled[digest] = found
                return found, []
            compiled, records = await self._compile_call(model, episode)
            self._store_compiled(digest, key, compiled)
            self._compiled[digest] = compiled
            return compiled, records

        (compiled, records), shared = await self._compile_flight.run(digest, fresh)
        if shared or not records:
            self.stats.compile_saved += 1
            return compiled, cached
        return compiled, records

    async def _compile_call(
        self, model: ModelConfig, episode: Episode
    ) -> tuple[Compiled, list[CallRecord]]:
        graph_msg = episode.brief + "\n\n" + strings.COMPILER_GRAPH_PROMPT
        revision_msg = render_revision_prompt(list(episode.steps), episode.revision.text)
        graph, revision = await asyncio.gather(
            self._chat(model, [{"role": "user", "content": graph_msg}], "compiler"),
            self._chat(model, [{"role": "user", "content": revision_msg}], "compiler"),
        )
        self.stats.compile_calls += 2
        compiled = _make_compiled(model.name, graph.content, revision.content)
        return compiled, [graph.call, revision.call]

    def _compile_path(self, digest: str) -> Path:
        return self.compile_dir / f"{digest}.json"

    def _load_compiled(self, digest: str, model: ModelConfig) -> Compiled | None:
        path = self._compile_path(digest)
        try:
            data = orjson.loads(path.read_bytes())
            payload = data["payload"]
            if data["checksum"] != _digest(payload):
                raise ValueError("checksum mismatch")
            if _digest(payload["key"])[:40] != digest:  # a file copied under another key
                raise ValueError("stored key does not match the file's key")
            compiled = _make_compiled(
                model.name, str(payload["graph_reply"]), str(payload["revision_reply"])
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            self.stats.corrupt += 1
            path.unlink(missing_ok=True)
            return None
        self.stats.disk_hits += 1
        return compiled

    def _store_compiled(self, digest: str, key: Mapping[str, object], c: Compiled) -> None:
        payload = {
            "key": dict(key),
            "graph_reply": c.graph_reply,
            "revision_reply": c.revision_reply,
        }
        data = {"checksum": _digest(payload), "payload": payload}
        _write_atomic(self._compile_path(digest), orjson.dumps(data, option=orjson.OPT_SORT_KEYS))

    async def precompile(self, tasks: Iterable[Task], *, concurrency: int = 16) -> int:
        """Compile every distinct key the gate arms of ``tasks`` need, ``concurrency`` at a
        time; returns the number of distinct keys. Episodes then find their compile cached."""
        from runner.arms import ARMS  # the arms import this module's neighbours

        jobs: dict[str, tuple[ModelConfig, Episode]] = {}
        episodes: dict[object, Episode] = {}
        for task in tasks:
            if not getattr(ARMS.get(task.cell.arm), "compiles", False):
                continue
            model = self.compile_model(task.cell)
            ep = episodes.get(task.spec)
            if ep is None:
                ep = episodes[task.spec] = generate(task.spec)
            jobs.setdefault(_digest(self.compile_key(model, ep))[:40], (model, ep))
        pending = iter(jobs.values())

        async def worker() -> None:
            for model, ep in pending:
                await self._compile(model, ep)

        async with anyio.create_task_group() as tg:
            for _ in range(min(concurrency, len(jobs))):
                tg.start_soon(worker)
        return len(jobs)

    # --- matcher ------------------------------------------------------------------------
    def matcher_key(self, model: ModelConfig, prompt: str) -> str:
        return _digest(
            {
                "v": CACHE_VERSION,
                "model": model.name,
                "served": model.served_name(),
                "regime": model.regime,
                "prompt": prompt,
                "prompts": _MATCHER_HASH,
            }
        )[:40]

    async def match(
        self, cell: CellKey, episode: Episode, turn: Turn, ctx: EpisodeContext
    ) -> tuple[str | None, bool]:
        """(matched step or None, explicit redo) for ``turn``; no call on bypassed turns."""
        if turn.kind in MATCHER_BYPASS:
            return None, False
        self.stats.matcher_requests += 1
        model = self.grid.model(cell.model)
        prompt = render_matcher_prompt(list(episode.steps), turn.text)
        key = self.matcher_key(model, prompt)
        answer = self._matched.get(key) or self._load_match(key)
        if answer is not None:
            self.stats.matcher_saved += 1
            self.stats.disk_hits += key in self._on_disk
            ctx.calls.append(self._cached_record(model, "matcher"))
            return answer.step, answer.redo
        ids = [s.id for s in episode.steps]

        async def fresh() -> tuple[_MatchAnswer, list[CallRecord]]:
            found = self._matched.get(key)
            if found is not None:
                return found, []
            result = await self._match_call(model, prompt, ids)
            self._store_match(key, result[0])
            return result

        (answer, records), shared = await self._match_flight.run(key, fresh)
        if shared or not records:
            self.stats.matcher_saved += 1
            records = [self._cached_record(model, "matcher")]
        ctx.calls.extend(records)
        return answer.step, answer.redo

    async def _match_call(
        self, model: ModelConfig, prompt: str, ids: list[str]
    ) -> tuple[_MatchAnswer, list[CallRecord]]:
        messages = [{"role": "user", "content": prompt}]
        reply = await self._chat(model, messages, "matcher")
        self.stats.matcher_calls += 1
        records = [reply.call]
        parsed = parse_match(reply.content, ids)
        if parsed is None:
            self.stats.matcher_retries += 1
            messages += [
                {"role": "assistant", "content": reply.content},
                {"role": "user", "content": strings.MATCHER_RETRY},
            ]
            reply = await self._chat(model, messages, "matcher")
            self.stats.matcher_calls += 1
            records.append(reply.call)
            parsed = parse_match(reply.content, ids)
        if parsed is None:
            self.stats.matcher_malformed += 1
            return _MatchAnswer(None, False, malformed=True), records
        return _MatchAnswer(parsed[0], parsed[1]), records

    def _shard(self, key: str) -> Path:
        return self.matcher_dir / f"{key[:2]}.jsonl"

    def _load_match(self, key: str) -> _MatchAnswer | None:
        shard = key[:2]
        if shard not in self._shards:
            self._shards.add(shard)
            self._read_shard(self._shard(key), shard)
        return self._matched.get(key)

    def _read_shard(self, path: Path, shard: str) -> None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return
        if data and not data.endswith(b"\n"):
            self._ragged.add(shard)
        for line in data.splitlines():
            try:
                row = orjson.loads(line)
                body = [row["k"], row["step"], row["redo"], row["malformed"]]
                if row["c"] != _digest(body)[:16]:
                    raise ValueError("checksum mismatch")
                answer = _MatchAnswer(row["step"], bool(row["redo"]), bool(row["malformed"]))
            except (ValueError, KeyError, TypeError):
                self.stats.corrupt += 1
                continue
            self._matched[str(row["k"])] = answer
            self._on_disk.add(str(row["k"]))

    def _store_match(self, key: str, answer: _MatchAnswer) -> None:
        self._matched[key] = answer
        body = [key, answer.step, answer.redo, answer.malformed]
        row = {
            "k": key,
            "step": answer.step,
            "redo": answer.redo,
            "malformed": answer.malformed,
            "c": _digest(body)[:16],
        }
        line = orjson.dumps(row) + b"\n"
        shard = key[:2]
        path = self._shard(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        if shard in self._ragged:  # a killed write left half a line: start a fresh one
            line = b"\n" + line
            self._ragged.discard(shard)
        with path.open("ab") as f:
            f.write(line)


def _make_compiled(model: str, graph_reply: str, revision_reply: str) -> Compiled:
    return Compiled(
        model=model,
        graph=parse_graph(graph_reply),
        revision=parse_compiled_revision(revision_reply),
        graph_reply=graph_reply,
        revision_reply=revision_reply,
    )
