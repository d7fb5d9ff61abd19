"""The matcher helper (Section 3.2, Appendix B.2): resolves a user turn to (step, redo).

One request per turn that is not a filler or the revision (schedule metadata), with
``render_matcher_prompt`` by the cell's model in its regime and the matcher budget of that
regime. A reply that :func:`protocol.state.compiled_parse.parse_match` rejects is answered once with
``MATCHER_RETRY`` as a follow-up user turn (the bad reply kept as the assistant turn); a
second bad reply resolves to no step (``None, False``) and is recorded as malformed.

Cache key: (model label, served name, regime, prompt); the prompt is the step list plus the
user's text, so the directive, enforcement and hybrid arms of one seed share each answer
(ours; ``[run] matcher_cache = "arm"`` adds the arm to the key, one call per arm).
Answers are kept in memory and appended to ``OUT/cache/matcher/<2 hex>.jsonl``
(:class:`runner.gates.cache.MatcherStore`); single-flight, so concurrent episodes share one call.
A turn served without a request (memory, disk, another episode's call in flight) logs the
records of the requests that made its answer as ``cached=True, shared=True``, tokens kept
(what the arm needed; an answer read from a cache line written before the calls were
stored logs one such record with zero tokens). The requests made are written once to the
run's helper log (``OUT/helpers.jsonl``, a ``matcher`` line per answer), beside the compiles.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from protocol import strings
from protocol.arms.render import render_matcher_prompt
from protocol.records import CallRecord, CellKey, Episode, HelperLogLine, Turn, kept_reply
from protocol.state.compiled import MATCHER_BYPASS
from protocol.state.compiled_parse import parse_match
from runner.client.endpoint import ChatEndpoint
from runner.gates.base import Helper, shared_calls
from runner.gates.cache import HelperStats, MatchAnswer, MatcherStore, SingleFlight, digest
from runner.gates.compiler import CACHE_VERSION
from runner.grid.expand import Grid
from runner.grid.schema import ModelConfig

__all__ = ["BYPASSED", "Matcher"]

_MATCHER_HASH = hashlib.sha256(
    (strings.MATCHER_PROMPT + "\0" + strings.MATCHER_RETRY).encode()
).hexdigest()[:16]
BYPASSED = MatchAnswer(None, False)  # a filler or the revision: no matcher call


class Matcher(Helper):
    """Matcher answers for the gate arms of one run (see the module docstring)."""

    def __init__(
        self,
        grid: Grid,
        out_dir: Path,
        endpoints: Mapping[str, ChatEndpoint],
        stats: HelperStats,
    ) -> None:
        super().__init__(grid, out_dir, endpoints, stats)
        self.store = MatcherStore(out_dir / "cache" / "matcher", stats, root=out_dir)
        self._flight: SingleFlight[tuple[MatchAnswer, list[CallRecord]]] = SingleFlight()

    def key(self, model: ModelConfig, prompt: str, arm: str | None = None) -> str:
        """The cache key; ``arm`` only when the grid keys answers by arm."""
        fields = {
            "v": CACHE_VERSION,
            "model": model.name,
            "served": model.served_name(),
            "regime": model.regime,
            "prompt": prompt,
            "prompts": _MATCHER_HASH,
        }
        if arm is not None:
            fields["arm"] = arm
        return digest(fields)[:40]

    def _cached_records(self, model: ModelConfig, key: str) -> list[CallRecord]:
        calls = self.store.calls.get(key)
        if calls:
            return shared_calls(calls)
        budget = model.chat_kwargs(self.grid.decoding, "matcher")["max_tokens"]
        return [CallRecord(role="matcher", cached=True, shared=True, max_tokens=budget)]

    async def match(
        self, cell: CellKey, episode: Episode, turn: Turn, *, reverse: bool = False
    ) -> tuple[MatchAnswer, list[CallRecord]]:
        """The matcher's answer for ``turn`` and the calls to log; none on bypassed turns.
        ``reverse``: the step list in reverse order (the ask knob's second reading; its own
        prompt, so its own cache entry)."""
        if turn.kind in MATCHER_BYPASS:
            return BYPASSED, []
        self.stats.matcher_requests += 1
        model = self.grid.model(cell.model)
        steps = list(reversed(episode.steps)) if reverse else list(episode.steps)
        prompt = render_matcher_prompt(steps, turn.text)
        key = self.key(model, prompt, cell.arm if self.grid.run.matcher_cache == "arm" else None)
        answer = self.store.get(key)
        if answer is not None:
            self.stats.matcher_saved += 1
            self.stats.disk_hits += key in self.store.on_disk
            return answer, self._cached_records(model, key)
        ids = [s.id for s in episode.steps]

        async def fresh() -> tuple[MatchAnswer, list[CallRecord]]:
            found = self.store.answers.get(key)
            if found is not None:
                return found, []
            answer, records, raw = await self._call(model, prompt, ids)
            self.store.store(key, answer, tuple(records))
            line = HelperLogLine(kind="matcher", key=key, calls=tuple(records), replies=raw)
            self.log.write(line)
            return answer, records

        (answer, records), shared = await self._flight.run(key, fresh)
        if shared or not records:
            self.stats.matcher_saved += 1
            records = self._cached_records(model, key)
        return answer, records

    async def _call(
        self, model: ModelConfig, prompt: str, ids: list[str]
    ) -> tuple[MatchAnswer, list[CallRecord], tuple[str, ...]]:
        """(the answer, the requests made, their raw replies, each bounded)."""
        endpoint = self.endpoints[model.endpoint_for("matcher")]
        kwargs = model.chat_kwargs(self.grid.decoding, "matcher")
        messages = [{"role": "user", "content": prompt}]
        reply = await endpoint.chat(messages=messages, **kwargs)
        self.stats.matcher_calls += 1
        records = [reply.call]
        parsed = parse_match(reply.content, ids)
        if parsed is not None:
            return MatchAnswer(parsed[0], parsed[1]), records, (kept_reply(reply.content),)
        self.stats.matcher_retries += 1
        messages += [
            {"role": "assistant", "content": reply.content},
            {"role": "user", "content": strings.MATCHER_RETRY},
        ]
        first = reply.content
        reply = await endpoint.chat(messages=messages, **kwargs)
        self.stats.matcher_calls += 1
        records.append(reply.call)
        replies = (kept_reply(first), kept_reply(reply.content))
        parsed = parse_match(reply.content, ids)
        if parsed is None:
            self.stats.matcher_malformed += 1
            return MatchAnswer(None, False, malformed=True, replies=replies), records, replies
        return MatchAnswer(parsed[0], parsed[1], corrected=True, replies=replies), records, replies
