"""Resolving a user message to a step, as the matcher prompt asks (Section 3.2).

Order of tests, first hit wins:

1. The revision message (it opens with the paper's cancel sentence): kind ``revision``.
2. No work order in the message: a filler, kind ``none``.
3. Exact template match: the message with its work order put back as ``{wo}`` equals one of
   the domain wordings (protocol/domains/known.py); the wording's template text names the step in
   the brief. A ``legit_redo`` wording sets ``redo``.
4. The user's answer to a gate's clarifying question naming a step (the ask knob,
   ``strings.USER_CLARIFY_STEP`` / ``USER_CLARIFY_REDO``): that step (``redo`` for the latter).
   A re-ask frame or the uncooperative user's restate (``{text}`` is a brief step text):
   that step.
5. The uncooperative user's double order naming two brief steps (``strings.USER_DOUBLE``,
   the user_style knob, or its plain control ``USER_DOUBLE_PLAIN``): kind ``double``; else an ambiguous frame naming two brief steps:
   kind ``ambiguous``, no step.
6. Fallback for wordings the templates do not hold (held-out paraphrases): the brief step
   sharing the most content words with the message, if it covers at least half of that
   step's content words and no other step ties; ``redo`` when the message says "again" and
   "authoriz..." or "redo". Otherwise kind ``unknown``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Literal

import msgspec

from protocol import rule_strings, strings
from protocol.domains.known import POOLS, registry_version
from protocol.domains.stop_words import STOP_WORDS
from serve.agents.patterns import WORK_ORDER, alternation, template_regex

__all__ = ["Resolution", "covering", "is_revision", "resolve", "template_texts", "wording_index"]

Kind = Literal["step", "ambiguous", "double", "revision", "none", "unknown"]
_WO = re.compile(WORK_ORDER)
_REVISION_OPENING = strings.REVISION_CANCEL.split("{text}")[0]
_WORD = re.compile(r"[a-z0-9]+")


class Resolution(msgspec.Struct, frozen=True, kw_only=True):
    kind: Kind
    step: str | None = None
    redo: bool = False
    named: tuple[str, ...] = ()
    work_order: str | None = None


def wording_index() -> dict[str, tuple[str, str]]:
    """Every loaded domain's wording (with ``{wo}`` left in) -> (template text, wording kind)."""
    return _wording_index(registry_version())


@lru_cache(maxsize=1)
def _wording_index(_version: int) -> dict[str, tuple[str, str]]:
    index: dict[str, tuple[str, str]] = {}
    for pool in POOLS.values():
        for t in pool.templates:
            for kind in ("asks", "premature", "redo_probes", "status", "legit_redo"):
                for wording in getattr(t, kind):
                    index[wording] = (t.text, kind)
    return index


def template_texts() -> frozenset[str]:
    """Every step text of every loaded domain."""
    return _template_texts(registry_version())


@lru_cache(maxsize=1)
def _template_texts(_version: int) -> frozenset[str]:
    return frozenset(t.text for pool in POOLS.values() for t in pool.templates)


def covering(texts: Iterable[str]) -> tuple[str, ...]:
    """The text set to build alternation patterns over: every template text when ``texts``
    are template texts (one compiled pattern for all episodes), else ``texts`` themselves."""
    texts = tuple(sorted(texts))
    return tuple(sorted(template_texts())) if template_texts().issuperset(texts) else texts


def _frames(texts: tuple[str, ...]) -> tuple[list[re.Pattern[str]], list[re.Pattern[str]]]:
    return _frames_of(texts, registry_version())


@lru_cache(maxsize=64)
def _frames_of(
    texts: tuple[str, ...], _version: int
) -> tuple[list[re.Pattern[str]], list[re.Pattern[str]]]:
    alt = alternation(texts)
    re_asks = [
        template_regex(f, anchored=True, text=alt, wo=WORK_ORDER)
        for pool in POOLS.values()
        for f in pool.re_asks
    ]
    ambiguous = [
        template_regex(f, anchored=True, a=alt, b=alt, wo=WORK_ORDER)
        for pool in POOLS.values()
        for f in pool.ambiguous
    ]
    return re_asks, ambiguous


def _content(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS and len(w) > 2}


def _fuzzy(message: str, texts: Mapping[str, str], wo: str) -> Resolution:
    words = _content(message)
    scored = sorted(
        ((len(words & _content(t)) / max(1, len(_content(t))), v) for v, t in texts.items()),
        reverse=True,
    )
    if not scored or scored[0][0] < 0.5 or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return Resolution(kind="unknown", work_order=wo)
    low = message.lower()
    redo = "again" in low and ("authoriz" in low or "redo" in low)
    return Resolution(kind="step", step=scored[0][1], redo=redo, work_order=wo)


def is_revision(message: str) -> bool:
    return message.lstrip().startswith(_REVISION_OPENING)


@lru_cache(maxsize=1)
def _clarify() -> tuple[tuple[re.Pattern[str], bool], ...]:
    """The scripted user's answers naming a step to a gate's clarifying question (the ask
    knob; ours): (pattern, whether it authorizes a redo)."""
    return tuple(
        (template_regex(f, anchored=True, text=r"[^']+", wo=WORK_ORDER), redo)
        for f, redo in ((strings.USER_CLARIFY_REDO, True), (strings.USER_CLARIFY_STEP, False))
    )


@lru_cache(maxsize=1)
def _doubles() -> tuple[re.Pattern[str], ...]:
    """The uncooperative user's double order (the user_style knob; ours) and its plain
    control (``double_plain``, issue #46)."""
    return tuple(
        template_regex(fmt, anchored=True, wo=WORK_ORDER)
        for fmt in (strings.USER_DOUBLE, strings.USER_DOUBLE_PLAIN)
    )


@lru_cache(maxsize=1)
def _restates() -> tuple[re.Pattern[str], ...]:
    """The uncooperative user's restated orders (the user_style knob; ours), both versions,
    a budgeted step asked for once more (the budget knob, issue #48; ours) and an exclusive
    step's alternative asked for (the exclusive knob)."""
    return tuple(
        template_regex(fmt, anchored=True, wo=WORK_ORDER)
        for fmt in (
            strings.USER_RESTATE,
            strings.USER_RESTATE_V5,
            rule_strings.BUDGET_REPEAT,
            rule_strings.EXCLUSIVE_ASK,
        )
    )


def resolve(message: str, texts: Mapping[str, str]) -> Resolution:
    """The step ``message`` asks for; ``texts`` maps step id -> brief text."""
    message = message.strip()
    if message.startswith(_REVISION_OPENING):
        return Resolution(kind="revision")
    m = _WO.search(message)
    if m is None:
        return Resolution(kind="none")
    wo = m.group(0)
    by_text = {t: v for v, t in texts.items()}
    hit = wording_index().get(message.replace(wo, "{wo}"))
    if hit is not None:
        step = by_text.get(hit[0])
        if step is None:
            return Resolution(kind="unknown", work_order=wo)
        return Resolution(kind="step", step=step, redo=hit[1] == "legit_redo", work_order=wo)
    for pattern, redo in _clarify():  # the user's answer to a gate's question (issue #38)
        if (fm := pattern.match(message)) and fm["text"] in by_text:
            return Resolution(kind="step", step=by_text[fm["text"]], redo=redo, work_order=wo)
    re_asks, ambiguous = _frames(covering(by_text))
    for pattern in re_asks:
        if (fm := pattern.match(message)) and fm["text"] in by_text:
            return Resolution(kind="step", step=by_text[fm["text"]], work_order=wo)
    for pattern in _restates():
        if (fm := pattern.match(message)) and fm["text"] in by_text:
            return Resolution(kind="step", step=by_text[fm["text"]], work_order=wo)
    for pattern in _doubles():
        if (fm := pattern.match(message)) and fm["a"] in by_text and fm["b"] in by_text:
            named = (by_text[fm["a"]], by_text[fm["b"]])
            return Resolution(kind="double", named=named, work_order=wo)
    for pattern in ambiguous:
        if (fm := pattern.match(message)) and fm["a"] in by_text and fm["b"] in by_text:
            named = (by_text[fm["a"]], by_text[fm["b"]])
            return Resolution(kind="ambiguous", named=named, work_order=wo)
    return _fuzzy(message, texts, wo)
