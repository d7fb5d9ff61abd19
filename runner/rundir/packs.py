"""A run directory's copies of the domain pack files it ran (:mod:`runner.grid.packs` reads
and registers a pack file).

A run directory keeps a copy of every file pack it ran under ``domains/NAME.toml``
(:func:`keep_packs`); rescoring loads those copies (:func:`load_run_packs`) unless a
``--domain-file`` given first names the same pack, and refuses, in one line, a pack whose
digest is not the one the run's copy (or its specs) recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from protocol.config import EpisodeSpec
from protocol.domains.known import DIGESTS
from protocol.domains.packs import PackError, pack_digest
from protocol.episode.versions import SpecError, pool_of
from runner.files import lines, write_atomic
from runner.grid.packs import load_pack_file, loaded_texts, read_pack
from runner.rundir.logs import decode_record, log_files

__all__ = ["PACKS_DIR", "keep_packs", "load_run_packs"]

PACKS_DIR = "domains"  # under a run directory


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
        if write:  # never through a planted link: a new file, renamed into place
            write_atomic(path, loaded_texts()[name].encode("utf-8"))


def load_run_packs(run_dir: Path, files: Sequence[Path] = ()) -> None:
    """Load the packs a run needs to rescore: ``files`` first (``--domain-file``), then the
    run's own copies of the others; then check each log's first spec against the loaded
    pack, refusing (:class:`PackError`, one line) a pack that changed since the run."""
    given = {load_pack_file(f).name: f for f in files}
    root = run_dir.parent if run_dir.name == "logs" else run_dir
    for path in sorted((root / PACKS_DIR).glob("*.toml")):
        if path.stem not in given:  # the run's copy: loaded as it ran (its digest is checked)
            load_pack_file(path, meaning=False)
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
