"""Domain packs: a domain as a TOML text, parsed and checked (pure; the caller reads the file).

A pack decodes into the :class:`~protocol.domains.shape.DomainPool` the generator reads
(``docs/domains.md`` gives the format field by field). :func:`check_pack`
(:mod:`protocol.domains.pack_rules`) states every rule the generator, the scripted user and the
matcher rely on, one problem per line naming the source, the template and the field;
:func:`load_pack` parses, checks and returns the pool or raises
:class:`PackError` with every problem. :func:`pack_digest` is the digest an episode spec
records for a file pack: a function of the decoded pool (comments and layout of the file do
not change it).
"""

from __future__ import annotations

import hashlib
import re
import tomllib

import msgspec

from protocol.domains.meaning import meaning_problems
from protocol.domains.pack_rules import (
    LEGACY_WORDINGS,
    MIN_FILLERS,
    PARAPHRASES,
    PER_PHASE,
    PHASES,
    WORDING_FIELDS,
    check_pack,
    pack_overlaps,
)
from protocol.domains.shape import DomainPool
from protocol.domains.words import key_words
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
