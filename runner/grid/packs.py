"""Domain pack files: read, checked (:mod:`protocol.domains.packs`), registered, kept with a run.

A grid's ``domains`` (or ``--domain-file``) may name a pack file beside the built-in domain
names: :func:`resolve_domains` reads each file, registers its pool
(:func:`protocol.domains.known.register`) and gives back the pack's name, which is then the cells'
domain. A run directory's copies of its packs are :mod:`runner.rundir.packs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from protocol.domains.known import DIGESTS, POOLS, register
from protocol.domains.packs import PackError, pack_toml, parse_pack
from protocol.domains.shape import DomainPool
from runner.files import read_regular

__all__ = [
    "is_pack_file",
    "load_pack_file",
    "loaded_texts",
    "read_pack",
    "register_texts",
    "resolve_domains",
]

_TEXTS: dict[str, str] = {}  # a registered file pack's name -> the text it was read from


# OURS (#47): the built-in packs are some 30 KB; TOML parsing is pure Python, so a pack of
# 64 MiB would take minutes and gigabytes: 1 MiB is 30 times the largest real one
MAX_PACK_BYTES = 1 << 20


def is_pack_file(entry: str) -> bool:
    """A domain entry that names a file (``./my_domain.toml``), not a domain."""
    return entry.endswith(".toml") or "/" in entry or "\\" in entry


def read_pack(path: Path, *, meaning: bool = True) -> tuple[DomainPool, str]:
    """The checked pool of the pack file ``path`` and its text; :class:`PackError` (one line
    per problem) when it cannot be read or fails a check (``meaning``: :func:`parse_pack`)."""
    try:
        text = read_regular(path, cap=MAX_PACK_BYTES).decode("utf-8")  # regular, bounded
    except OSError as e:
        raise PackError([f"cannot read domain pack {path}: {e.strerror or e}"]) from None
    except UnicodeDecodeError:
        raise PackError([f"cannot read domain pack {path}: not a UTF-8 text file"]) from None
    return parse_pack(text, str(path), meaning=meaning), text


def load_pack_file(path: Path, *, meaning: bool = True) -> DomainPool:
    """Read, check and register the pack file ``path``; its pool (``meaning=False``: a run
    directory's copy, loaded without the rules added after it ran; :func:`parse_pack`)."""
    pool, text = read_pack(path, meaning=meaning)
    if register(pool) is not None:
        _TEXTS[pool.name] = text  # the text as last read (a pack forgotten and read again)
    return pool


def register_texts(texts: dict[str, str]) -> None:
    """Register packs given as name -> text (a rescoring worker process's initializer)."""
    for name, text in texts.items():
        if name not in DIGESTS:
            register(parse_pack(text, name))


def loaded_texts() -> dict[str, str]:
    """Every registered file pack as name -> text (what a worker process needs)."""
    return {n: _TEXTS.get(n) or pack_toml(POOLS[n]) for n in DIGESTS}


def resolve_domains(entries: Sequence[str], base: Path | None = None) -> list[str]:
    """``entries`` with every pack file (relative to ``base``) loaded and replaced by its
    pack's name; :class:`PackError` with every problem of every file."""
    out: list[str] = []
    problems: list[str] = []
    for e in entries:
        if not is_pack_file(e):
            out.append(e)
            continue
        path = Path(e) if base is None or Path(e).is_absolute() else base / e
        try:
            out.append(load_pack_file(path).name)
        except PackError as err:
            problems += err.problems
    if problems:
        raise PackError(problems)
    return out
