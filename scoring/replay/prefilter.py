"""Exact keyword pre-checks derived from regular expressions.

:func:`required_literals` reads a compiled pattern's parse tree and returns what every match
must contain, as alternatives of conjunctions of string sets: every match contains, for some
alternative, one string of each of its sets (or None when nothing can be named).
:class:`Prefilter` combines a family of patterns: when a text satisfies no alternative of any
pattern, no pattern of the family can match it and the expensive search is skipped. Derived
from the patterns themselves, the pre-check follows any change to them (nothing to keep in
sync by hand).

How it is found: consecutive exact pieces of a pattern (literals, small character classes,
short optional pieces, alternations of exact strings) are multiplied out into the strings
they can match, up to :data:`MAX_STRINGS`; zero-width assertions (``\\b``, look-around) do
not break a run. Every run contributes one set to the conjunction (sets whose shortest string
is under :data:`MIN_LENGTH` characters are dropped: they filter nothing). An alternation of
non-exact branches contributes the alternatives of its branches (those of one set each merged
into one set, their union); a repeat with a minimum of
one contributes what its item requires. Past :data:`MAX_ALTERNATIVES` alternatives the
requirement of the later piece is dropped (a weaker, still necessary, condition).

Whitespace: the text is compared with every run of whitespace made one space, so ``\\s+``
is one space (``\\s*`` an optional one) and runs such as ``no\\s+need\\s+to`` stay exact
strings ("no need to"); adjacent spaces in a product collapse to one (a weaker string).

Case: text is compared case-folded. Under ``re.IGNORECASE`` every character that matches an
ASCII letter case-folds to that letter, except the dotted ``İ`` and dotless ``ı``, which
``re`` matches to ``i``; a text holding either always takes the full path. A pattern with a
non-ASCII cased literal yields None.
"""

from __future__ import annotations

import re
import re._parser as _sre  # type: ignore[import-not-found]  # stdlib, no stub
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "MAX_ALTERNATIVES",
    "MAX_STRINGS",
    "MIN_LENGTH",
    "Prefilter",
    "raw_text_regex",
    "raw_text_searches",
    "required_literals",
]

MAX_STRINGS = 64
MAX_ALTERNATIVES = 16
MIN_LENGTH = 3  # shorter required strings are dropped: they filter nothing
_ZERO_WIDTH = {"AT", "ASSERT", "ASSERT_NOT"}
_REPEATS = {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"}
_Strings = frozenset[str]
_Conj = tuple[_Strings, ...]
_DNF = list[_Conj]  # any one conjunction; [()] requires nothing


class _Unsupported(Exception):
    pass


_SPACE = frozenset({" "})


def _char(code: int) -> str:
    ch = chr(code)
    if ch.isspace():
        return " "  # the text is compared with every whitespace run made one space
    if not ch.isascii() and ch.lower() != ch.upper():
        raise _Unsupported(ch)
    return ch.casefold()


def _class_strings(items: Any) -> _Strings | None:
    out: set[str] = set()
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            out.add(_char(av))
        elif name == "RANGE" and av[1] - av[0] <= 8:
            out.update(_char(c) for c in range(av[0], av[1] + 1))
        elif name == "CATEGORY" and str(av) == "CATEGORY_SPACE":
            out.add(" ")
        else:
            return None
    return frozenset(out)


def _product(a: _Strings, b: _Strings) -> _Strings | None:
    if len(a) * len(b) > MAX_STRINGS:
        return None
    # Adjacent whitespace collapses, as it does in the normalized text.
    return frozenset((x + y).replace("  ", " ") for x in a for y in b)


def _exact_seq(seq: Any) -> _Strings | None:
    """Every string *seq* can match, when that is a small finite set."""
    out: _Strings | None = frozenset({""})
    for op, av in seq:
        if str(op) in _ZERO_WIDTH:
            continue
        alts = _exact_node(str(op), av)
        if alts is None or out is None:
            return None
        out = _product(out, alts)
    return out


def _exact_node(name: str, av: Any) -> _Strings | None:
    if name == "LITERAL":
        return frozenset({_char(av)})
    if name == "IN":
        return _class_strings(av)
    if name == "SUBPATTERN":
        return _exact_seq(av[-1])
    if name == "ATOMIC_GROUP":
        return _exact_seq(av)
    if name == "BRANCH":
        branches = [_exact_seq(b) for b in av[1]]
        if any(b is None for b in branches):
            return None
        return frozenset().union(*(b for b in branches if b is not None))
    if name in _REPEATS and _exact_seq(av[2]) == _SPACE:
        return _SPACE if av[0] >= 1 else frozenset({"", " "})  # \\s+ and \\s*
    if name in _REPEATS and av[1] <= 2:
        item = _exact_seq(av[2])
        if item is None:
            return None
        out: set[str] = set()
        for count in range(av[0], av[1] + 1):
            strings: _Strings | None = frozenset({""})
            for _ in range(count):
                strings = _product(strings, item) if strings is not None else None
            if strings is None:
                return None
            out |= strings
        return frozenset(out)
    return None


def _useful(strings: _Strings) -> bool:
    return bool(strings) and min(map(len, strings)) >= MIN_LENGTH


def _best(conjunction: _Conj) -> _Strings | None:
    """The most selective single set of a conjunction (longest shortest string)."""
    return max(conjunction, key=lambda s: (min(map(len, s)), -len(s)), default=None)


def _and(a: _DNF, b: _DNF) -> _DNF:
    out = [tuple(dict.fromkeys(x + y)) for x in a for y in b]
    return out if len(out) <= MAX_ALTERNATIVES else a


def _required_seq(seq: Any) -> _DNF:
    required: _DNF = [()]
    run: _Strings = frozenset({""})
    for op, av in seq:
        name = str(op)
        if name in _ZERO_WIDTH:
            continue
        alts = _exact_node(name, av)
        grown = _product(run, alts) if alts is not None else None
        if grown is not None:
            run = grown
            continue
        if _useful(run):
            required = _and(required, [(run,)])
        if alts is None:
            required = _and(required, _required_node(name, av))
            run = frozenset({""})
        else:
            run = alts
    if _useful(run):
        required = _and(required, [(run,)])
    return required


def _required_node(name: str, av: Any) -> _DNF:
    if name == "SUBPATTERN":
        return _required_seq(av[-1])
    if name == "ATOMIC_GROUP":
        return _required_seq(av)
    if name == "BRANCH":
        alternatives = [c for b in av[1] for c in _required_seq(b)]
        if () in alternatives:
            return [()]
        # Alternatives of one set each are one set: their union.
        singles = frozenset().union(*(c[0] for c in alternatives if len(c) == 1))
        merged = [c for c in alternatives if len(c) > 1] + ([(singles,)] if singles else [])
        return merged if len(merged) <= MAX_ALTERNATIVES else [()]
    if name in _REPEATS and av[0] >= 1:
        return _required_seq(av[2])
    return [()]


def required_literals(pattern: re.Pattern[str]) -> tuple[tuple[frozenset[str], ...], ...] | None:
    """Alternatives of conjunctions of case-folded string sets: every match of *pattern*
    contains one string of each set of some alternative. None when nothing can be named."""
    try:
        required = _required_seq(_sre.parse(pattern.pattern, pattern.flags))
    except _Unsupported:
        return None
    if () in required:
        return None
    return tuple(dict.fromkeys(required))


def _trie(strings: Iterable[str], space: str = "\\ ") -> str:
    """A regex matching exactly *strings*, shaped as a trie: at each position the engine
    follows one branch per character instead of trying every string (several times faster
    than a flat alternation on text that holds none of them). Each space of a string is
    matched by *space* (an escaped space; ``\\s+`` for text not normalized)."""
    root: dict[str, Any] = {}
    for string in strings:
        node = root
        for ch in string:
            node = node.setdefault(ch, {})
        node[""] = {}
    return _trie_node(root, space)


def _trie_node(node: dict[str, Any], space: str) -> str:
    branches = [
        (space if ch == " " else re.escape(ch)) + _trie_node(sub, space)
        for ch, sub in sorted(node.items())
        if ch
    ]
    if not branches:
        return ""
    if len(branches) == 1 and "" not in node:
        return branches[0]  # a chain of single characters stays a plain literal
    body = "(?:" + "|".join(branches) + ")"
    return body + "?" if "" in node else body


def _literal_regex(strings: Iterable[str]) -> re.Pattern[str]:
    return re.compile(_trie(strings))


class Prefilter:
    """``may_match(text)`` is False only when no pattern of the family can match *text*.

    Evaluation: one search for the most selective set of every alternative (the common "no"
    in one C call); otherwise each required string is looked up in the case-folded text
    (``in``, the fastest substring test Python has), each set is a bit, and some pattern may
    match when all the bits of one of its alternatives are present.
    """

    __slots__ = ("_any", "_patterns", "_strings", "anchors", "required")

    def __init__(self, patterns: Iterable[re.Pattern[str]]) -> None:
        found = [required_literals(p) for p in patterns]
        self.required: tuple[tuple[frozenset[str], ...], ...] | None = (
            None
            if any(r is None for r in found)
            else tuple(c for r in found if r is not None for c in r)
        )
        conjunctions = self.required or ()  # any one satisfied: some pattern may match
        best = (_best(c) for c in conjunctions)
        # the strings of the first search: some pattern may match only where one occurs
        self.anchors = frozenset(s for group in best if group is not None for s in group)
        self._any = _literal_regex(self.anchors)
        groups = list(dict.fromkeys(g for c in conjunctions for g in c))
        bit = {g: 1 << i for i, g in enumerate(groups)}
        self._patterns = tuple(sum({bit[g] for g in c}) for c in conjunctions)
        strings = sorted({s for g in groups for s in g})
        self._strings = tuple((s, sum(bit[g] for g in groups if s in g)) for s in strings)

    @staticmethod
    def prepare(text: str) -> str | None:
        """*text* as the pre-check reads it: case-folded, every whitespace run one space.
        None when it holds ``İ`` or ``ı`` (such text always takes the full path)."""
        if "\u0130" in text or "\u0131" in text:
            return None
        # re.sub(r"\s+", " ", folded), three times faster: str.split splits on the very
        # characters \s matches (both are Py_UNICODE_ISSPACE), and an outer run stays one space
        folded = text.casefold()
        joined = " ".join(folded.split())
        if folded[:1].isspace():
            joined = " " + joined
        if folded[-1:].isspace() and joined.strip():
            joined += " "
        return joined

    def may_match(self, text: str) -> bool:
        prepared = self.prepare(text)
        return prepared is None or self.may_match_prepared(prepared)

    def may_match_prepared(self, folded: str) -> bool:
        """:meth:`may_match` of a text already put through :meth:`prepare`."""
        if self.required is None:
            return True
        if self._any.search(folded) is None:
            return False
        present = 0
        for string, bits in self._strings:
            if string in folded:
                present |= bits
        return any(present & need == need for need in self._patterns)


def raw_text_regex(*prefilters: Prefilter) -> re.Pattern[str] | None:
    """One search that finds, in a lower-cased ASCII text whose whitespace is *not*
    normalized, every place where the first search of some of *prefilters* would hit its
    :meth:`Prefilter.prepare`-d form: each anchor string, its spaces matched by ``\\s+``.
    For ASCII text ``casefold`` is ``lower`` and a whitespace run is one space after
    ``prepare``, so no hit means ``may_match`` is False for every one of *prefilters*
    (the rescoring hot path reads a reply's lowered text once). None when some prefilter
    names nothing (it may match any text)."""
    if any(p.required is None for p in prefilters):
        return None
    return re.compile(_trie({s for p in prefilters for s in p.anchors}, space=r"\s+"))


# OURS: English letters, the most common first (a fixed order, not read from any log): a
# pivot is taken as rare as the cover allows, so the search stops at fewer places
_COMMON = " etaoinsrhldcumfpgwybvkxjqz"


def _rarity(ch: str) -> int:
    at = _COMMON.find(ch)
    return at if at >= 0 else len(_COMMON)  # any other character: rarer than these


def _pivots(strings: list[str]) -> dict[str, list[str]]:
    """The strings by pivot: a character of each one's head (what precedes its first space),
    chosen greedily (the character in the most heads left, the rarer on a tie); a string with
    an empty head keyed by "" (searched as it is)."""
    left = sorted(s for s in strings if s.split(" ", 1)[0])
    out: dict[str, list[str]] = {"": [s for s in strings if not s.split(" ", 1)[0]]}
    while left:
        heads = [s.split(" ", 1)[0] for s in left]
        chars = sorted({c for h in heads for c in h})
        pivot = max(chars, key=lambda c: (sum(c in h for h in heads), _rarity(c)))
        out[pivot] = [s for s, h in zip(left, heads, strict=True) if pivot in h]
        left = [s for s, h in zip(left, heads, strict=True) if pivot not in h]
    return {k: v for k, v in out.items() if v}


def _pivoted(string: str, pivot: str, space: str) -> list[str]:
    """*string* as regex pieces that start at its pivot: the pivot, a look-behind for the head
    up to it (fixed width: a head holds no space), then the rest."""
    at = string.index(pivot) if pivot else 0
    pieces = [re.escape(string[at])] if pivot else []
    if at:
        pieces.append("(?<=" + re.escape(string[: at + 1]) + ")")
    rest = string[at + 1 :] if pivot else string
    return pieces + [space if ch == " " else re.escape(ch) for ch in rest]


def raw_text_searches(*prefilters: Prefilter) -> tuple[Callable[[str], object], ...] | None:
    """:func:`raw_text_regex` as a few searches, each of strings that share a first character
    (the engine skips to that character alone, not to any of the fifteen letters that
    start the anchors, and starts its matcher less often; #50, seventh round): some search
    finds a match exactly where the one regex does. Each anchor is searched from a pivot
    character of its first word, the word's part before it read by a look-behind, so a match
    of the anchor at ``p`` is a match of its search at ``p`` + the pivot's offset, and the
    other way round. None where :func:`raw_text_regex` is None."""
    if any(p.required is None for p in prefilters):
        return None
    strings = sorted({s for p in prefilters for s in p.anchors})
    searches = []
    for pivot, group in _pivots(strings).items():
        root: dict[str, Any] = {}
        for string in group:
            node = root
            for piece in _pivoted(string, pivot, r"\s+"):
                node = node.setdefault(piece, {})
            node[""] = {}
        searches.append(re.compile(_pieces_node(root)).search)
    return tuple(searches)


def _pieces_node(node: dict[str, Any]) -> str:
    """:func:`_trie_node` of a trie whose edges are regex pieces."""
    branches = [piece + _pieces_node(sub) for piece, sub in sorted(node.items()) if piece]
    if not branches:
        return ""
    if len(branches) == 1 and "" not in node:
        return branches[0]
    body = "(?:" + "|".join(branches) + ")"
    return body + "?" if "" in node else body
