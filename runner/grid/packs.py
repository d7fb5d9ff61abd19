"""Domain pack files: read, checked (:mod:`protocol.packs`), registered, kept with a run.

A grid's ``domains`` (or ``--domain-file``) may name a pack file beside the built-in domain
names: :func:`resolve_domains` reads each file, registers its pool
(:func:`protocol.domains.register`) and gives back the pack's name, which is then the cells'
domain. A run directory keeps a copy of every file pack it ran under ``domains/NAME.toml``
(:func:`keep_packs`); rescoring loads those copies (:func:`load_run_packs`) unless a
``--domain-file`` given first names the same pack, and refuses, in one line, a pack whose
digest is not the one the run's copy (or its specs) recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from protocol.config import EpisodeSpec
from protocol.domain_types import DomainPool
from protocol.domains import DIGESTS, POOLS, register
from protocol.packs import PackError, pack_digest, pack_toml, parse_pack
from protocol.versions import SpecError, pool_of
from runner.rundir.files import lines, read_regular
from runner.rundir.logs import decode_record, log_files

__all__ = [
    "PACKS_DIR",
    "is_pack_file",
    "keep_packs",
    "load_pack_file",
    "load_run_packs",
    "loaded_texts",
    "read_pack",
    "register_texts",
    "resolve_domains",
]

PACKS_DIR = "domains"  # under a run directory
_TEXTS: dict[str, str] = {}  # a registered file pack's name -> the text it was read from


def is_pack_file(entry: str) -> bool:
    """A domain entry that names a file (``./my_domain.toml``), not a domain."""
    return entry.endswith(".toml") or "/" in entry or "\\" in entry


def read_pack(path: Path) -> tuple[DomainPool, str]:
    """The checked pool of the pack file ``path`` and its text; :class:`PackError` (one line
    per problem) when it cannot be read or fails a check."""
    try:
        text = read_regular(path).decode("utf-8")  # a regular file, bounded
    except OSError as e:
        raise PackError([f"cannot read domain pack {path}: {e.strerror or e}"]) from None
    except UnicodeDecodeError:
        raise PackError([f"cannot read domain pack {path}: not a UTF-8 text file"]) from None
    return parse_pack(text, str(path)), text


def load_pack_file(path: Path) -> DomainPool:
    """Read, check and register the pack file ``path``; its pool."""
    pool, text = read_pack(path)
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


def keep_packs(domains: Iterable[str], run_dir: Path, *, write: bool = True) -> None:
    """Copy every file pack among ``domains`` into ``run_dir/domains/``; a copy already there
    must hold the same pack (a resumed run keeps its packs). ``write=False``: the check
    alone (a run checks its packs before any endpoint is contacted)."""
    for name in dict.fromkeys(domains):
        if name not in DIGESTS:
            continue
        path = run_dir / PACKS_DIR / f"{name}.toml"
        if path.exists():
            kept, _ = read_pack(path)
            if pack_digest(kept) != DIGESTS[name]:
                raise PackError(
                    [
                        f"domain pack {name!r} changed since {run_dir} was started (its copy "
                        f"{path} has digest {pack_digest(kept)}, the pack given "
                        f"{DIGESTS[name]}); use another --out, or run the copy"
                    ]
                )
            continue
        if write:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(loaded_texts()[name], encoding="utf-8")


def load_run_packs(run_dir: Path, files: Sequence[Path] = ()) -> None:
    """Load the packs a run needs to rescore: ``files`` first (``--domain-file``), then the
    run's own copies of the others; then check each log's first spec against the loaded
    pack, refusing (:class:`PackError`, one line) a pack that changed since the run."""
    given = {load_pack_file(f).name: f for f in files}
    root = run_dir.parent if run_dir.name == "logs" else run_dir
    for path in sorted((root / PACKS_DIR).glob("*.toml")):
        if path.stem not in given:
            load_pack_file(path)
    seen: set[tuple[str, str | None]] = set()
    for log in log_files(run_dir):
        spec = _first_spec(log)
        if spec is None:
            continue
        key = (spec.domain, spec.domain_digest if isinstance(spec.domain_digest, str) else None)
        if key in seen:
            continue
        seen.add(key)
        try:
            pool_of(spec)
        except SpecError as e:
            where = f" ({given[spec.domain]})" if spec.domain in given else ""
            raise PackError([f"{log}: {e}{where}"]) from None


def _first_spec(log: Path) -> EpisodeSpec | None:
    try:
        first = next(lines(log), None)  # a regular file's first line, capped
        if first is None or first.text is None:
            return None
        return decode_record(first.text).spec
    except (OSError, msgspec.DecodeError):  # the log reader reports it
        return None
