"""Checking a held-out paraphrase cache (tier 2, Appendix A.5) before any episode uses it.

A.5: "every ask, premature probe, and redo probe is rewritten ... with three rewrites per
template, cached offline (108 templates, every rewrite a distinct string that keeps the
step's noun)". 108 = 18 step templates x (3 ask + 3 redo-probe paraphrases): premature asks
are asks and share their wordings (A.3 counts 54 redo-probe templates). The generator-3 cache
is, per domain, ``slug -> {"asks": [[3 rewrites] x 3], "redo_probes": [[3 rewrites] x 3]}``,
each rewrite holding one ``{wo}``.

"Keeps the step's noun" is read (OURS) as: the rewrite shares at least one content word
(four letters or more, not a stop word) with the template's brief text, as "the major
equipment acquisition" keeps "equipment" of "place the main equipment order".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping

import msgspec

from protocol.domains.shape import DomainPool

__all__ = [
    "HELD_OUT_KINDS",
    "REWRITES",
    "RewriteSource",
    "check_paraphrases",
    "content_words",
    "rewrite_problems",
    "rewrite_sources",
]

HELD_OUT_KINDS = ("asks", "redo_probes")
REWRITES = 3
_WORD = re.compile(r"[a-z]+")
_STOP = frozenset(
    [
        "about",
        "after",
        "again",
        "also",
        "before",
        "from",
        "have",
        "into",
        "just",
        "once",
        "over",
        "please",
        "that",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "those",
        "through",
        "under",
        "what",
        "when",
        "where",
        "which",
        "while",
        "with",
        "your",
    ]
)


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if len(w) >= 4 and w not in _STOP)


def check_paraphrases(cache: object, pool: DomainPool) -> list[str]:
    """Every problem of ``cache`` for ``pool``, one line each (empty: the cache is usable)."""
    if not isinstance(cache, Mapping):
        return ["the cache must be a JSON object: template slug -> wordings"]
    problems: list[str] = []
    seen: dict[str, str] = {}
    templates = 0
    for t in pool.templates:
        entry = cache.get(t.slug)
        if not isinstance(entry, Mapping):
            problems.append(f"{t.slug}: missing (every template of {pool.name} needs rewrites)")
            continue
        nouns = content_words(t.text)
        for kind in HELD_OUT_KINDS:
            groups = entry.get(kind)
            if not isinstance(groups, list) or len(groups) != len(getattr(t, kind)):
                problems.append(f"{t.slug}.{kind}: needs one list of rewrites per paraphrase (3)")
                continue
            for i, group in enumerate(groups):
                templates += 1
                where = f"{t.slug}.{kind}[{i}]"
                if not isinstance(group, list) or len(group) != REWRITES:
                    problems.append(f"{where}: needs exactly {REWRITES} rewrites")
                    continue
                for r, text in enumerate(group):
                    problems += _check_rewrite(f"{where}[{r}]", text, nouns, seen)
    if not problems and templates != 2 * 3 * len(pool.templates):  # pragma: no cover
        problems.append(f"expected {2 * 3 * len(pool.templates)} templates, found {templates}")
    return problems


def _check_rewrite(
    where: str, text: object, nouns: frozenset[str], seen: MutableMapping[str, str]
) -> list[str]:
    if not isinstance(text, str):
        return [f"{where}: not a string"]
    problems: list[str] = []
    rest = text.replace("{wo}", "")
    if text.count("{wo}") != 1 or "{" in rest or "}" in rest:
        problems.append(f"{where}: needs exactly one {{wo}} placeholder and no other braces")
    if not nouns & content_words(text):
        problems.append(f"{where}: keeps no word of the step's text ({', '.join(sorted(nouns))})")
    if text in seen:
        problems.append(f"{where}: the same string as {seen[text]}")
    else:
        seen[text] = where
    return problems


class RewriteSource(msgspec.Struct, frozen=True, kw_only=True):
    """One template wording the held-out rewriter rewrites REWRITES times."""

    slug: str
    kind: str  # one of HELD_OUT_KINDS
    index: int  # which of the template's three paraphrases
    wording: str  # the paraphrase, with its one "{wo}"
    step_text: str  # the step's brief text (the noun a rewrite keeps)


def rewrite_sources(pool: DomainPool) -> list[RewriteSource]:
    """The 108 wordings of ``pool`` the cache rewrites (18 templates x 3 asks + 3 redo
    probes), in cache order."""
    return [
        RewriteSource(slug=t.slug, kind=kind, index=i, wording=w, step_text=t.text)
        for t in pool.templates
        for kind in HELD_OUT_KINDS
        for i, w in enumerate(getattr(t, kind))
    ]


def rewrite_problems(
    text: str, source: RewriteSource, seen: MutableMapping[str, str], where: str = "rewrite"
) -> list[str]:
    """Why ``text`` cannot be a rewrite of ``source`` (empty: it can, and ``seen`` records
    it): the checks :func:`check_paraphrases` applies on load (one ``{wo}``, a word of the
    step's text, a string no other rewrite is), and (OURS) it must differ from the wording
    it rewrites."""
    if text == source.wording:
        return [f"{where}: the same string as the wording it rewrites"]
    return _check_rewrite(where, text, content_words(source.step_text), seen)
