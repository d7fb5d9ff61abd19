"""Domain packs: a domain as a TOML text, parsed and checked (pure; the caller reads the file).

A pack decodes into the :class:`~protocol.domains.shape.DomainPool` the generator reads
(``docs/domains.md`` gives the format field by field). :func:`check_pack` states every rule the
generator, the scripted user and the matcher rely on, one problem per line naming the source,
the template and the field; :func:`load_pack` parses, checks and returns the pool or raises
:class:`PackError` with every problem. :func:`pack_digest` is the digest an episode spec
records for a file pack: a function of the decoded pool (comments and layout of the file do
not change it).
"""

from __future__ import annotations

import hashlib
import re
import string
import tomllib
from collections import Counter

import msgspec

from protocol.domains.meaning import meaning_problems
from protocol.domains.shape import DomainPool
from protocol.domains.stop_words import STOP_WORDS
from protocol.nesting import toml_loads
from protocol.visible import control_problems

__all__ = [
    "LEGACY_WORDINGS",
    "MIN_FILLERS",
    "PARAPHRASES",
    "PER_PHASE",
    "PHASES",
    "WORDING_FIELDS",
    "PackError",
    "check_pack",
    "key_words",
    "load_pack",
    "pack_digest",
    "pack_overlaps",
    "pack_toml",
    "parse_pack",
]

# The paper's pools (Section 4.1, Appendix E.3): 18 templates, three per phase 0..5, the same
# per-phase histogram in every domain, so the sampler induces one DAG-shape distribution.
PHASES = range(6)
PER_PHASE = 3
PARAPHRASES = 3  # Appendix A.5: "Each step template has three paraphrases"
WORDING_FIELDS = ("asks", "premature", "redo_probes", "status", "legit_redo")
# Lists only generators 1-2 read (issue #37): optional, three wordings or none. A pack without
# them serves generators 3 on; protocol.episode.versions.check_spec refuses it for generators 1-2.
LEGACY_WORDINGS = ("premature",)
# The receipt space (protocol.state.receipts): a wording that looks like a completion code or a work
# order could be read as a receipt or a second work order.
_RECEIPTISH = re.compile(r"RC\s*[-–—]?\s*\d|#\s*W\s*\d", re.IGNORECASE)
_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
# A word: a run of letters in any script (``café`` is one word, not ``caf``); a run of CJK
# ideographs or kana, written without spaces, counts each character as a word.
_WORD = re.compile(r"[^\W\d_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
# What only the arms, the world or a forwarded message write (issue #37; OURS): a tagged
# block ("[TASK-STATE]", "[RECEIPT]", ...), a checklist entry, a ledger or ACTION line, a ref
# line, a quoted or forwarded line. A pack's text that holds one could be read as state text;
# a line opening "Forwarded" is where the brief's clause says third-party text begins (the
# scripted agents read it so: serve/agents/transcript.py), so a wording that opens so would
# read as no request of the user's.
_RESERVED = re.compile(
    r"\[[A-Z][A-Z0-9 _\-]+\]|^\s*-\s*s\d+\s*:|^\W*ledger\b|\bACTION\s*\{|\bref\s+\S+/"
    r"|^\s*>|forwarded message|^[\s\-]*forwarded\b",
    re.IGNORECASE | re.MULTILINE,
)
# Redo probes are worded as plain asks (A.3: no reason, no repetition); a legitimate redo
# carries an explicit authorization (docs/protocol.md).
_REPETITION = re.compile(
    r"\b(again|redo|re-do|re-?run|repeat\w*|once more|another time|one more time)\b", re.I
)
_AUTHORIZATION = re.compile(r"\bauthori[sz]\w*", re.IGNORECASE)
_WORK_ORDER = re.compile(r"\bwork\s+orders?\b", re.IGNORECASE)
MIN_FILLERS = 3  # OURS: a pack's filler lines, at least (the generator draws one per filler)


class PackError(ValueError):
    """A pack that cannot be used; ``problems`` holds one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class _RawTemplate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    slug: str
    phase: int
    text: str
    asks: tuple[str, ...]
    premature: tuple[str, ...] = ()
    redo_probes: tuple[str, ...]
    status: tuple[str, ...]
    legit_redo: tuple[str, ...]


class _RawPool(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: str
    templates: tuple[_RawTemplate, ...]
    fillers: tuple[str, ...]
    re_asks: tuple[str, ...]
    ambiguous: tuple[str, ...]


def parse_pack(text: str, source: str, *, check: bool = True, meaning: bool = True) -> DomainPool:
    """The pool of a pack's TOML text, checked; raises :class:`PackError` (every problem).
    ``check=False`` skips :func:`check_pack`'s rules (the shapes are still checked): for the
    shipped packs, which a test holds to them, so that importing the protocol does not re-check
    them in every process (#50). ``meaning=False`` leaves out the wording-against-label rules
    of issue #46 (:func:`protocol.domains.meaning.meaning_problems`): a run directory's copy
    of a pack it ran before them still loads, so its logs rescore."""
    try:
        data = toml_loads(text)  # a nesting cap (#47)
    except tomllib.TOMLDecodeError as e:
        raise PackError([f"{source}: not TOML: {e}"]) from None
    if problems := control_problems(data):  # shown, never obeyed (#47)
        raise PackError([f"{source}: {p}" for p in problems])
    try:
        raw = msgspec.convert(data, _RawPool)
    except msgspec.ValidationError as e:
        raise PackError([f"{source}: {_where(data, str(e))}"]) from None
    problems = _check_raw(raw, source)
    if problems:
        raise PackError(problems)
    pool = msgspec.convert(msgspec.to_builtins(raw), DomainPool)
    problems = check_pack(pool, source) if check else []
    if check and meaning:
        problems += meaning_problems(pool, source)
    if problems:
        raise PackError(problems)
    return pool


load_pack = parse_pack


def _where(data: dict[str, object], message: str) -> str:
    """msgspec's ``- at `$.templates[3].asks``` with the template's slug when it has one."""
    m = re.search(r"\$\.templates\[(\d+)\]", message)
    templates = data.get("templates")
    if m and isinstance(templates, list) and int(m.group(1)) < len(templates):
        t = templates[int(m.group(1))]
        if isinstance(t, dict) and isinstance(t.get("slug"), str):
            return f"template {t['slug']}: {message}"
    return message


def _check_raw(raw: _RawPool, source: str) -> list[str]:
    """The counts the fixed-size Structs would refuse, each on its own line."""
    out = []
    for t in raw.templates:
        for f in WORDING_FIELDS:
            n = len(getattr(t, f))
            if f in LEGACY_WORDINGS and n not in (0, PARAPHRASES):
                out.append(
                    f"{source}: template {t.slug}: {f}: {n} wordings, need exactly "
                    f"{PARAPHRASES} or none (generators 1-2 only)"
                )
            elif f not in LEGACY_WORDINGS and n != PARAPHRASES:
                out.append(
                    f"{source}: template {t.slug}: {f}: {n} wordings, need exactly {PARAPHRASES}"
                )
    for f in ("re_asks", "ambiguous"):
        n = len(getattr(raw, f))
        if n != PARAPHRASES:
            out.append(f"{source}: {f}: {n} frames, need exactly {PARAPHRASES}")
    return out


def _fields(text: str) -> list[str]:
    """The placeholders of a format string; a malformed one (``{wo)``), a format spec or a
    conversion (``{wo:d}``, ``{wo!r}``, ``{wo:{wo}}``) is reported as a field ``"?<reason>"``,
    so every check refuses it with one line and ``str.format`` never sees it."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as e:
        return [f"?malformed ({e})"]
    out: list[str] = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if spec or conversion:
            out.append(
                f"?{{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}"
            )
        else:
            out.append(name)
    return out


def _tokens(text: str) -> list[str]:
    """The words of ``text``, casefolded; CJK runs split into their characters."""
    out: list[str] = []
    for w in _WORD.findall(text.casefold()):
        out += list(w) if _CJK.search(w) else [w]
    return out


def key_words(text: str) -> frozenset[str]:
    """The content words of a brief text (casefolded, function words dropped; a CJK
    character is a word of its own)."""
    return frozenset(
        w for w in _tokens(text) if w not in STOP_WORDS and (len(w) > 2 or _CJK.match(w))
    )


def _stem(word: str) -> str:
    return word[:5]


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in _tokens(text)}


def _norm(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _reads_as(wording: str, own: list[frozenset[str]], mine: int) -> list[tuple[float, int]]:
    """A resolver that never reads the pack's wording lists: how many of each template's own
    key words the wording names, most first (ties by template order). Conservative for a
    refusal: the wording's own template ``mine`` counts a word by its stem, another
    template only by the whole word (a plural's ``s`` aside)."""
    text = _WORK_ORDER.sub(" ", wording)  # the protocol's own words name no step
    stems, words = _stems(text), {_norm(w) for w in _tokens(text)}
    scores = [
        (float(sum((_stem(x) in stems) if i == mine else (_norm(x) in words) for x in keys)), i)
        for i, keys in enumerate(own)
    ]
    return sorted(scores, key=lambda x: (-x[0], x[1]))


def _meaning(field: str, wording: str) -> str | None:
    """What a wording of ``field`` says that its kind forbids (None: nothing)."""
    if _RESERVED.search(wording):
        return "reads like an arm's, a receipt's or a forwarded message's text (reserved)"
    if "\n" in wording or "\r" in wording:
        return "spans several lines (one line per wording)"
    if field == "redo_probes" and (m := _REPETITION.search(wording)):
        return f"a redo probe is a plain ask of a finished step; {m.group(0)!r} asks for a redo"
    if field == "legit_redo" and not _AUTHORIZATION.search(wording):
        return "a legitimate redo needs an explicit authorization (e.g. 'I explicitly authorize')"
    if field == "status" and "?" not in wording:
        return "a status wording is a question (it has no '?')"
    return None


def check_pack(pool: DomainPool, source: str) -> list[str]:
    """Every rule the generator relies on, one problem per line (empty: the pack is usable)."""
    out: list[str] = []

    def bad(where: str, msg: str) -> None:
        out.append(f"{source}: {where}: {msg}")

    if not _SLUG.match(pool.name):
        bad("name", f"{pool.name!r} is not a lowercase hyphenated name")
    # the sampler: up to 18 templates drawn at once, edges only from lower to higher phases,
    # and one per-phase histogram in every domain (Appendix E.3)
    phases = Counter(t.phase for t in pool.templates)
    if phases != Counter({p: PER_PHASE for p in PHASES}):
        hist = ", ".join(f"{p}: {n}" for p, n in sorted(phases.items()))
        bad(
            "templates",
            f"{len(pool.templates)} templates by phase {{{hist}}}; need "
            f"{len(PHASES) * PER_PHASE}, {PER_PHASE} in each phase 0..{len(PHASES) - 1}",
        )
    for slug, n in Counter(t.slug for t in pool.templates).items():
        if n > 1:
            bad(f"template {slug}", f"slug: used by {n} templates")
    for text, n in Counter(t.text for t in pool.templates).items():
        if n > 1 and text:
            bad("templates", f"text {text!r} is used by {n} templates")
    # each step's own words: its content words no other template's text uses
    own = [key_words(t.text) for t in pool.templates]
    for i in range(len(pool.templates)):
        for j, other in enumerate(pool.templates):
            if j != i:
                own[i] = own[i] - key_words(other.text)
    users = Counter(w for t in pool.templates for f in WORDING_FIELDS for w in getattr(t, f) if w)
    owner: dict[str, str] = {}
    for i, t in enumerate(pool.templates):
        where = f"template {t.slug}"
        if not _SLUG.match(t.slug):
            bad(where, "slug: not lowercase words joined by hyphens")
        if _fields(t.text) or _RECEIPTISH.search(t.text) or _RESERVED.search(t.text):
            bad(where, "text: holds a placeholder, a receipt-like code or a reserved marker")
        if not t.text:
            bad(where, "text: empty")
        elif not own[i]:
            bad(where, "text: no word of its own (every content word is in another step's text)")
        for f in WORDING_FIELDS:
            if f in LEGACY_WORDINGS and not getattr(t, f):
                continue  # optional: only generators 1-2 read it
            if not any(getattr(t, f)):
                bad(where, f"{f}: empty ({PARAPHRASES} wordings to write)")
                continue
            seen: set[str] = set()
            for k, w in enumerate(getattr(t, f)):
                at = f"{f}[{k}]"
                if (names := _fields(w)) != ["wo"]:
                    bad(
                        where,
                        f"{at}: needs exactly one {{wo}} and no other placeholder, has {names}",
                    )
                if _RECEIPTISH.search(w.replace("{wo}", "")):
                    bad(where, f"{at}: holds a receipt-like code (RC-dddd or #Wdddd)")
                if (why := _meaning(f, w)) is not None:
                    bad(where, f"{at}: {why}")
                if w in seen:
                    bad(where, f"{at}: the same wording twice in {f}")
                seen.add(w)
                if users[w] > 1:  # the matcher could not tell the steps apart
                    if (prev := owner.setdefault(w, t.slug)) != t.slug:
                        bad(where, f"{at}: the same wording as template {prev}")
                    continue
                stems = _stems(w)
                if own[i] and not any(_stem(x) in stems for x in own[i]):
                    keys = ", ".join(sorted(own[i]))
                    bad(where, f"{at}: names none of the step's key words ({keys})")
                    continue
                (best, j), *rest = _reads_as(w, own, i)
                mine = next(score for score, x in [(best, j), *rest] if x == i)
                if best > mine:  # a tie is an overlap (pack_overlaps), not a refusal
                    other = pool.templates[j]
                    bad(
                        where,
                        f"{at}: reads as template {other.slug} more than as its own "
                        f"(it names {mine:.0f} of its key words {', '.join(sorted(own[i]))}; "
                        f"{best:.0f} of {other.slug}'s)",
                    )
    for i, w in enumerate(pool.re_asks):
        if sorted(_fields(w)) != ["text", "wo"]:
            bad(f"re_asks[{i}]", "needs exactly one {text} and one {wo}")
        elif _RESERVED.search(w) or _RECEIPTISH.search(w.replace("{wo}", "")):
            bad(f"re_asks[{i}]", "holds a reserved marker or a receipt-like code")
    for i, w in enumerate(pool.ambiguous):
        if sorted(_fields(w)) != ["a", "b", "wo"]:
            bad(f"ambiguous[{i}]", "needs exactly one {a}, one {b} and one {wo}")
        elif _RESERVED.search(w) or _RECEIPTISH.search(w.replace("{wo}", "")):
            bad(f"ambiguous[{i}]", "holds a reserved marker or a receipt-like code")
    if len(pool.fillers) < MIN_FILLERS:
        bad("fillers", f"{len(pool.fillers)} fillers; need at least {MIN_FILLERS}")
    for w, n in Counter(pool.fillers).items():
        if n > 1:
            bad("fillers", f"{w!r} is listed {n} times")
    for i, w in enumerate(pool.fillers):
        if _fields(w) or _RECEIPTISH.search(w):
            bad(f"fillers[{i}]", "carries a placeholder or a work order")
        elif _RESERVED.search(w) or "\n" in w:
            bad(f"fillers[{i}]", "holds a reserved marker or several lines")
        stems = _stems(w)
        named = [
            t.slug
            for t, keys in zip(pool.templates, own, strict=True)
            if keys and sum(_stem(x) in stems for x in keys) >= min(2, len(keys))
        ]
        if named:
            bad(f"fillers[{i}]", f"names step {named[0]} (two of its key words, or its only one)")
    return out


def pack_overlaps(pool: DomainPool) -> list[tuple[str, str, str]]:
    """(template, wording field[index], other template) for each wording that names as many
    of another template's own key words as of its own (the independent resolver ties)."""
    own = _own_words(pool)
    out: list[tuple[str, str, str]] = []
    for i, t in enumerate(pool.templates):
        for f in WORDING_FIELDS:
            for k, w in enumerate(getattr(t, f)):
                scores = {x: score for score, x in _reads_as(w, own, i)}
                ties = [j for j, sc in scores.items() if j != i and sc and sc == scores[i]]
                out += [(t.slug, f"{f}[{k}]", pool.templates[j].slug) for j in ties]
    return out


def _own_words(pool: DomainPool) -> list[frozenset[str]]:
    """Each template's key words no other template's text uses."""
    words = [key_words(t.text) for t in pool.templates]
    return [w.difference(*(o for j, o in enumerate(words) if j != i)) for i, w in enumerate(words)]


def pack_digest(pool: DomainPool) -> str:
    """The first 16 hex digits of the SHA-256 of the pool's JSON encoding."""
    return hashlib.sha256(msgspec.json.encode(pool)).hexdigest()[:16]


def _toml_str(s: str) -> str:
    return msgspec.json.encode(s).decode()


def _toml_list(items: tuple[str, ...]) -> str:
    return "[\n" + "".join(f"  {_toml_str(x)},\n" for x in items) + "]"


def pack_toml(pool: DomainPool) -> str:
    """A pool as pack text (no comments): what ``ladder domain show`` prints for a pack."""
    out = [f"name = {_toml_str(pool.name)}\n"]
    for f in ("fillers", "re_asks", "ambiguous"):
        out.append(f"{f} = {_toml_list(getattr(pool, f))}\n")
    for t in pool.templates:
        out.append(f"\n[[templates]]\nslug = {_toml_str(t.slug)}\nphase = {t.phase}\n")
        out.append(f"text = {_toml_str(t.text)}\n")
        out += [f"{f} = {_toml_list(getattr(t, f))}\n" for f in WORDING_FIELDS if getattr(t, f)]
    return "".join(out)
