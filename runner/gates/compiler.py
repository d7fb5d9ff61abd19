"""The compiler helper (Section 3.2, Appendices B.1, B.3): the gates' compiled graph and
revision, cached on disk, single-flight, pipelined with the episodes that need them.

Two requests per key, by the compile model (``ModelConfig.compile_model``, by default the
cell's own model) in that model's regime, with the compiler budget of that regime:

* the graph: ONE user message, the brief followed by a blank line and
  ``COMPILER_GRAPH_PROMPT`` ("The graph prompt (appended to the brief)");
* the revision: one user message, ``render_revision_prompt(steps, revision message)``.

Both are compiled when an episode is prepared (the revision message is fixed by the spec), so
one cache entry holds both and a run can compile ahead of its episodes (:meth:`precompile`).

Cache key (Appendix B.3: "compiled graphs are cached per (seed, S, rho)"): the compile model
(its label, served name and regime), the domain, (seed, S, rho), the revision message (hashed)
and a hash of the two compiler prompts (so editing a prompt invalidates old entries). With
``run.compile_cache = "spec"`` (the default) the brief is NOT in the key: the two briefs of a
seed share one compile, made from the brief listed first in ``run.briefs`` (a choice of ours:
the step list, dependencies and codes the compiler reads are the same in both briefs; a
deterministic brief keeps the compile independent of which episode reaches it first); with
``"brief"`` the brief text (hashed) is in the key and each brief compiles from its own text.
EXCLUDED on purpose, so that one compile is shared where the paper shares it: the arm and
every knob (directive, enforcement and hybrid arms and their variants share it), the agent
model and regime when a separate compile model is configured (the paper's no-think checkpoint
compiles for both regimes), ``paraphrase_tier`` and ``ambiguous_rate`` (they change neither
the brief nor the revision message), the decoding settings and the endpoint's address. Entries live in
``OUT/cache/compile/<key>.json`` (:class:`runner.gates.cache.CompileStore`), holding the raw
replies, the two calls that made them, and a checksum; the raw replies are stored, not the
parse, so a better parser applies to old entries.

Accounting: the two requests of a fresh compile are written once to the run's helper log
(``OUT/helpers.jsonl``, a :class:`protocol.records.HelperLogLine` per compile) with their
real tokens, latency and attempts. Every episode that uses the compile logs the same two
records: as made (``cached=False``) by the episode whose own call made them, as
``cached=True, shared=True`` (tokens kept: what the arm required) everywhere else.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import anyio
import msgspec

from protocol import rule_strings, strings
from protocol.arms.render import render_revision_prompt
from protocol.arms.table import arm_spec
from protocol.episode.generate import generate
from protocol.records import CallRecord, CellKey, Episode, HelperLogLine, kept_reply
from protocol.state.compiled import CompiledGraph, CompiledRevision
from protocol.state.compiled_parse import parse_graph
from protocol.state.compiled_parse import parse_revision as parse_compiled_revision
from runner.client.endpoint import ChatEndpoint
from runner.gates.base import Helper, shared_calls
from runner.gates.cache import CompileStore, HelperStats, SingleFlight, digest
from runner.grid.expand import Grid, Task
from runner.grid.schema import ModelConfig

__all__ = [
    "CACHE_VERSION",
    "Compiled",
    "Compiler",
]

CACHE_VERSION = 2  # 2: the brief leaves the key under compile_cache = "spec"
_PROMPTS_HASH = hashlib.sha256(
    (strings.COMPILER_GRAPH_PROMPT + "\0" + strings.COMPILER_REVISION_PROMPT).encode()
).hexdigest()[:16]


class Compiled(msgspec.Struct, frozen=True, kw_only=True):
    """One compile: the parsed graph and revision with the replies and calls they came from."""

    model: str  # the compile model's label
    graph: CompiledGraph
    revision: CompiledRevision
    graph_reply: str
    revision_reply: str
    calls: tuple[CallRecord, ...] = ()  # the two requests that made it (empty: unknown)


def truncated(error: str | None, call: CallRecord | None) -> str | None:
    """``error`` said as a truncation when its reply was cut by its budget (finish reason
    ``length``): the reply could not be read because it ends early, not for its content."""
    if error is None or call is None or call.finish_reason != "length":
        return error
    budget = f"{call.max_tokens} tokens" if call.max_tokens else "its budget"
    return f"truncated: the reply was cut at its budget ({budget}, finish_reason length)"


def make_compiled(
    model: str, graph_reply: str, revision_reply: str, calls: Sequence[CallRecord] = ()
) -> Compiled:
    """The parsed compile; a reply that cannot be read because it was cut by its budget
    says so (``calls``: the graph's request, then the revision's)."""
    graph = parse_graph(graph_reply)
    revision = parse_compiled_revision(revision_reply)
    first = calls[0] if calls else None
    second = calls[1] if len(calls) > 1 else None
    graph = msgspec.structs.replace(graph, error=truncated(graph.error, first))
    revision = msgspec.structs.replace(revision, error=truncated(revision.error, second))
    return Compiled(
        model=model,
        graph=graph,
        revision=revision,
        graph_reply=graph_reply,
        revision_reply=revision_reply,
        calls=tuple(calls),
    )


class Compiler(Helper):
    """Compiles for the gate arms of one run (see the module docstring)."""

    def __init__(
        self,
        grid: Grid,
        out_dir: Path,
        endpoints: Mapping[str, ChatEndpoint],
        stats: HelperStats,
    ) -> None:
        super().__init__(grid, out_dir, endpoints, stats)
        self.store = CompileStore(out_dir / "cache" / "compile", stats, root=out_dir)
        self._compiled: dict[str, Compiled] = {}
        self._flight: SingleFlight[tuple[Compiled, bool]] = SingleFlight()
        self._unclaimed: set[str] = set()  # made by the precompile, read by no episode yet

    def model_for(self, cell: CellKey) -> ModelConfig:
        """The compile model of ``cell``: its ``compile_model`` or the cell's own model."""
        model = self.grid.model(cell.model)
        return self.grid.model(model.compile_model) if model.compile_model else model

    def key(self, model: ModelConfig, episode: Episode) -> dict[str, object]:
        spec = episode.spec
        key: dict[str, object] = {
            "v": CACHE_VERSION,
            "model": model.name,
            "served": model.served_name(),
            "regime": model.regime,
            "domain": spec.domain,
            "seed": spec.seed,
            "steps": spec.steps,
            "density": spec.density,
            "generator": spec.generator,  # the graph depends on the generator version
            "revision": hashlib.sha256(episode.revision.text.encode()).hexdigest(),
            "prompts": _PROMPTS_HASH,
        }
        if self.grid.run.compile_cache == "brief" or episode.ruled:
            # a budgeted brief (issue #48) is compiled for itself: its BUDGETS list is read
            key["brief"] = hashlib.sha256(episode.brief.encode()).hexdigest()
        return key

    def _source(self, episode: Episode) -> Episode:
        """The episode whose brief the compile reads: itself when the key holds the brief,
        else the same spec under the grid's first brief."""
        first = self.grid.run.briefs[0] if self.grid.run.briefs else episode.spec.brief
        ruled = episode.ruled  # issue #48: compiled for itself
        if self.grid.run.compile_cache == "brief" or episode.spec.brief == first or ruled:
            return episode
        # Tier 0: the brief and revision do not depend on the wording (tier 2 needs its cache).
        spec = msgspec.structs.replace(episode.spec, brief=first, paraphrase_tier=0)
        return generate(spec)

    async def compile(self, cell: CellKey, episode: Episode) -> tuple[Compiled, list[CallRecord]]:
        """The compiled graph and revision for ``episode`` and the calls to log with it: as
        made by the episode whose call made them or, for a compile the precompile made, by
        the first episode that reads it (so the compile is charged to an arm that read it,
        and the episodes' made calls sum to the run's spend); as shared everywhere else."""
        model = self.model_for(cell)
        compiled, made = await self._compile(model, episode)
        if not made:
            made = self._claim(digest(self.key(model, episode))[:40])
        return compiled, list(compiled.calls) if made else shared_calls(compiled.calls)

    def _claim(self, key_digest: str) -> bool:
        """Whether this reader is the first of a compile the precompile made this run."""
        if key_digest in self._unclaimed:
            self._unclaimed.discard(key_digest)
            return True
        return False

    async def _compile(self, model: ModelConfig, episode: Episode) -> tuple[Compiled, bool]:
        """(the compile, whether this call made its requests)."""
        self.stats.compile_requests += 1
        key = self.key(model, episode)
        key_digest = digest(key)[:40]
        hit = self._compiled.get(key_digest)
        if hit is not None:
            self.stats.compile_saved += 1
            return hit, False

        async def fresh() -> tuple[Compiled, bool]:
            found = self._compiled.get(key_digest) or self._load(key_digest, model)
            if found is not None:
                self._compiled[key_digest] = found
                return found, False
            compiled = await self._call(model, episode)
            self._store(key_digest, key, compiled)
            self._compiled[key_digest] = compiled
            replies = (kept_reply(compiled.graph_reply), kept_reply(compiled.revision_reply))
            line = HelperLogLine(
                kind="compile", key=key_digest, calls=compiled.calls, replies=replies
            )
            self.log.write(line)
            return compiled, True

        (compiled, made), shared = await self._flight.run(key_digest, fresh)
        if shared or not made:
            self.stats.compile_saved += 1
            return compiled, False
        return compiled, True

    async def _call(self, model: ModelConfig, episode: Episode) -> Compiled:
        episode = self._source(episode)
        endpoint = self.endpoints[model.endpoint_for("compiler")]
        kwargs = model.chat_kwargs(self.grid.decoding, "compiler")
        graph_msg = episode.brief + "\n\n" + strings.COMPILER_GRAPH_PROMPT
        if episode.caps:  # the budget knob (issue #48, OURS): the paper's prompt, then ours
            graph_msg += "\n" + rule_strings.BUDGET_COMPILE_PROMPT
        if episode.lapses:
            graph_msg += "\n" + rule_strings.EXPIRY_COMPILE_PROMPT
        if episode.pairs:
            graph_msg += "\n" + rule_strings.EXCLUSIVE_COMPILE_PROMPT
        revision_msg = render_revision_prompt(list(episode.steps), episode.revision.text)
        graph, revision = await asyncio.gather(
            endpoint.chat(messages=[{"role": "user", "content": graph_msg}], **kwargs),
            endpoint.chat(messages=[{"role": "user", "content": revision_msg}], **kwargs),
        )
        self.stats.compile_calls += 2
        return make_compiled(
            model.name, graph.content, revision.content, [graph.call, revision.call]
        )

    def _load(self, key_digest: str, model: ModelConfig) -> Compiled | None:
        payload = self.store.load(key_digest)
        if payload is None:
            return None
        calls = msgspec.convert(payload.get("calls", []), tuple[CallRecord, ...])
        return make_compiled(
            model.name, str(payload["graph_reply"]), str(payload["revision_reply"]), calls
        )

    def _store(self, key_digest: str, key: Mapping[str, object], c: Compiled) -> None:
        payload = {
            "key": dict(key),
            "graph_reply": c.graph_reply,
            "revision_reply": c.revision_reply,
            "calls": msgspec.to_builtins(c.calls),
        }
        self.store.store(key_digest, payload)

    def jobs(self, tasks: Iterable[Task]) -> Iterator[tuple[ModelConfig, Episode]]:
        """Every distinct compile the compiling arms of ``tasks`` need, in task order (lazy:
        episodes are generated as the compiles are reached)."""
        seen: set[str] = set()
        for task in tasks:
            spec = arm_spec(task.cell.arm)
            if spec is None or not spec.compiles:
                continue
            model = self.model_for(task.cell)
            # The brief and revision do not depend on the wording tier: compile its tier-0 twin.
            ep = generate(msgspec.structs.replace(task.spec, paraphrase_tier=0))
            key_digest = digest(self.key(model, ep))[:40]
            if key_digest not in seen:
                seen.add(key_digest)
                yield model, ep

    async def precompile(self, tasks: Iterable[Task], *, concurrency: int = 16) -> int:
        """Compile every distinct key the compiling arms of ``tasks`` need, in task order,
        ``concurrency`` at a time; returns the number of distinct keys. Run beside the
        episodes, it compiles ahead of them: an episode that reaches its compile first joins
        the flight (single flight), and text-arm episodes never wait."""
        pending = self.jobs(tasks)
        count = 0

        async def worker() -> None:
            nonlocal count
            for model, ep in pending:
                count += 1
                _, made = await self._compile(model, ep)
                if made:
                    self._unclaimed.add(digest(self.key(model, ep))[:40])

        async with anyio.create_task_group() as tg:
            for _ in range(concurrency):
                tg.start_soon(worker)
        return count
