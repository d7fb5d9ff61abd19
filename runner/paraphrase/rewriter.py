"""The held-out rewriter (Appendix A.5): every ask and redo-probe wording rewritten
``REWRITES`` times by a model that is not the agent under test, into a tier-2 cache.

A.5: "every ask, premature probe, and redo probe is rewritten by Qwen3.6-35B, a model that
is not the agent under test, at temperature 0.7 with three rewrites per template, cached
offline (108 templates, every rewrite a distinct string that keeps the step's noun)". The
108 wordings of a domain are :func:`protocol.episode.paraphrases.rewrite_sources` (premature asks
share the ask wordings in generator 3).

Each rewrite is one call through the runner's client (:class:`runner.client.endpoint.Endpoint`: its
limiter, retries and backoff) with the request of ``ModelConfig.chat_kwargs`` for the
``rewriter`` role; the prompt is ``protocol.strings.REWRITE_PROMPT`` (OURS), naming the
rewrite's number and the earlier rewrites of the same wording so that the three differ.
The reply's first non-empty line, quotes stripped, is checked by
:func:`protocol.episode.paraphrases.rewrite_problems`; a failed check is sent back
(``REWRITE_RETRY``, same conversation) up to ``attempts`` times in all, then reported as a
:class:`Failure`, and the wording's later rewrites wait for the next run. Every call is
logged (:class:`CallLine`, one JSON line each). The cache is saved after every wording, so a
run that stops resumes: rewrites already in the file that still pass the checks are kept
and only the missing ones are requested.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec

from protocol import strings
from protocol.episode.paraphrases import REWRITES, RewriteSource, rewrite_problems
from protocol.records import CallRecord
from runner.client.endpoint import CallFailed, Endpoint
from runner.files import read_regular, write_atomic
from runner.grid.schema import ChatKwargs, Decoding, ModelConfig

__all__ = [
    "Cache",
    "CallLine",
    "Failure",
    "clean_reply",
    "load_cache",
    "rewrite_all",
    "rewrite_prompt",
    "save_cache",
]

# slug -> kind -> one list of rewrites per paraphrase (shorter while incomplete)
Cache = dict[str, dict[str, list[list[str]]]]


class Failure(msgspec.Struct, frozen=True, kw_only=True):
    """A rewrite that failed every attempt (or whose call failed)."""

    where: str  # slug.kind[paraphrase][rewrite]
    problems: tuple[str, ...]  # each line opens with ``where``


class CallLine(msgspec.Struct, frozen=True, kw_only=True, tag="rewrite"):
    """One rewriter call, as logged."""

    where: str
    attempt: int
    text: str
    problems: tuple[str, ...]
    call: CallRecord


def rewrite_prompt(source: RewriteSource, n: int, earlier: Sequence[str]) -> str:
    lines = "\n".join(f"- {e}" for e in earlier)
    return strings.REWRITE_PROMPT.format(
        step=source.step_text,
        n=n,
        total=REWRITES,
        others=" and from the earlier rewrites" if earlier else "",
        earlier=strings.REWRITE_EARLIER.format(lines=lines) if earlier else "",
        wording=source.wording,
    )


def clean_reply(content: str) -> str:
    """The rewrite in a reply: its first non-empty line, surrounding quotes and a leading
    "Rewrite:" label removed."""
    line = next((x.strip() for x in content.splitlines() if x.strip()), "")
    for _ in range(2):  # a quoted label or a labelled quote
        if len(line) >= 2 and line[0] == line[-1] and line[0] in "\"'`":
            line = line[1:-1].strip()
        for label in ("Rewrite:", "Rewritten request:", "Request:"):
            if line.lower().startswith(label.lower()):
                line = line[len(label) :].strip()
    return line


def load_cache(path: Path) -> Cache:
    """The cache at *path* as far as it goes ({} when absent); raises ValueError when the
    file is not a cache."""
    if not path.exists() and not path.is_symlink():
        return {}
    try:  # a regular file, never through a link, bounded (#47)
        data = msgspec.json.decode(read_regular(path, follow=False), type=Cache)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as e:
        raise ValueError(f"cannot resume from {path}: {e}") from None
    return data


def save_cache(path: Path, cache: Cache) -> None:
    """Write *cache* to *path* atomically (:func:`runner.files.write_atomic`: a fresh
    temporary name created exclusively, renamed over it; a planted link is replaced, never
    written through)."""
    write_atomic(path, msgspec.json.format(msgspec.json.encode(cache)))


def _where(s: RewriteSource, r: int) -> str:
    return f"{s.slug}.{s.kind}[{s.index}][{r}]"


def _kept(cache: Cache, sources: Sequence[RewriteSource], seen: dict[str, str]) -> Cache:
    """The rewrites of *cache* that still pass every check, in the shape of *sources*."""
    out: Cache = {}
    for s in sources:
        groups = out.setdefault(s.slug, {}).setdefault(s.kind, [])
        while len(groups) <= s.index:
            groups.append([])
        old = cache.get(s.slug, {}).get(s.kind, [])
        for text in old[s.index] if s.index < len(old) else []:
            if len(groups[s.index]) >= REWRITES:
                break
            if not rewrite_problems(text, s, seen, _where(s, len(groups[s.index]))):
                groups[s.index].append(text)
    return out


async def _one(
    endpoint: Endpoint,
    kwargs: ChatKwargs,
    source: RewriteSource,
    group: list[str],
    seen: dict[str, str],
    attempts: int,
    log: Callable[[CallLine], None],
) -> Failure | None:
    """Fill *group* up to REWRITES rewrites; the failure that stopped it, if any."""
    while len(group) < REWRITES:
        r = len(group)
        where = _where(source, r)
        messages = [{"role": "user", "content": rewrite_prompt(source, r + 1, group)}]
        problems: list[str] = []
        for attempt in range(1, attempts + 1):
            try:
                reply = await endpoint.chat(messages=messages, **kwargs)
            except CallFailed as e:
                return Failure(where=where, problems=(f"{where}: the call failed: {e}",))
            text = clean_reply(reply.content)
            problems = rewrite_problems(text, source, seen, where)
            log(CallLine(where=where, attempt=attempt, text=text, problems=tuple(problems),
                         call=reply.call))  # fmt: skip
            if not problems:
                group.append(text)
                break
            listed = "; ".join(p.removeprefix(f"{where}: ") for p in problems)
            messages += [
                {"role": "assistant", "content": reply.content},
                {"role": "user", "content": strings.REWRITE_RETRY.format(problems=listed, n=r + 1)},
            ]
        else:
            return Failure(where=where, problems=tuple(problems))
    return None


async def rewrite_all(
    endpoint: Endpoint,
    model: ModelConfig,
    decoding: Decoding,
    sources: Sequence[RewriteSource],
    cache: Cache,
    *,
    attempts: int = 3,
    save: Callable[[Cache], None] = lambda cache: None,
    log: Callable[[CallLine], None] = lambda line: None,
) -> tuple[Cache, list[Failure]]:
    """Complete *cache* for *sources*; (the cache, the rewrites that failed). Wordings of one
    template run in order (their rewrites must differ), templates concurrently under the
    endpoint's limiter; *save* gets the cache after every wording."""
    seen: dict[str, str] = {}
    out = _kept(cache, sources, seen)
    kwargs = model.chat_kwargs(decoding, "rewriter")
    failures: list[Failure] = []
    by_slug: dict[str, list[RewriteSource]] = {}
    for s in sources:
        by_slug.setdefault(s.slug, []).append(s)

    async def template(group: list[RewriteSource]) -> None:
        for s in group:
            failure = await _one(
                endpoint, kwargs, s, out[s.slug][s.kind][s.index], seen, attempts, log
            )
            if failure is not None:
                failures.append(failure)
            save(out)

    await asyncio.gather(*(template(g) for g in by_slug.values()))
    failures.sort(key=lambda f: f.where)
    return out, failures
