"""The domains the generator knows: the built-in packs and any file pack loaded this run.

The built-in packs, procurement and release engineering (paper, Section 4.1, Appendix A),
are TOML files shipped as package data (``protocol/domains/builtin/*.toml``) and read once at import
through :mod:`importlib.resources` (the only file protocol/ reads: the package's own data,
like its code). A researcher's pack is read by the caller (``runner.grid.packs``), parsed and
checked by :mod:`protocol.domains.packs`, and :func:`register`-ed: its name then resolves like a
built-in one, and its digest is what the specs of its episodes record
(:func:`protocol.episode.versions.pool_of` refuses a spec whose digest differs from the loaded pack's).
"""

from __future__ import annotations

from importlib.resources import files

from protocol.domains.packs import PackError, pack_digest, parse_pack
from protocol.domains.shape import DomainPool

__all__ = [
    "BUILTIN",
    "DIGESTS",
    "POOLS",
    "PROCUREMENT",
    "RELEASE",
    "builtin_text",
    "forget",
    "register",
    "registry_version",
]


def builtin_text(name: str) -> str:
    """The shipped TOML text of a built-in pack."""
    return files("protocol.domains").joinpath("builtin", f"{name}.toml").read_text(encoding="utf-8")


def _builtin(name: str) -> DomainPool:
    # check_pack's rules are held by tests/protocol/domains/test_domain_meaning.py
    return parse_pack(builtin_text(name), f"protocol/domains/builtin/{name}.toml", check=False)


PROCUREMENT = _builtin("procurement")
RELEASE = _builtin("release")
BUILTIN: dict[str, DomainPool] = {"procurement": PROCUREMENT, "release": RELEASE}
POOLS: dict[str, DomainPool] = dict(BUILTIN)  # built-in and registered packs, by name
DIGESTS: dict[str, str] = {}  # registered file packs: name -> pack digest
_version = [0]


def registry_version() -> int:
    """Bumped by every change to :data:`POOLS` (a cache key for what indexes every pool)."""
    return _version[0]


def register(pool: DomainPool) -> str | None:
    """Make ``pool`` resolvable by its name; its digest, or None for a built-in pack's own
    contents. Refuses a second, different pack under a name already loaded, and slugs that
    another loaded pack uses (the scripted agents index every pool's wordings at once)."""
    name = pool.name
    if name in BUILTIN:
        if pool == BUILTIN[name]:
            return None
        raise PackError([f"{name}: the name of a built-in domain; give the pack another name"])
    digest = pack_digest(pool)
    if name in DIGESTS:
        if DIGESTS[name] == digest:
            return digest
        raise PackError(
            [
                f"{name}: another pack of this name is loaded (digest {DIGESTS[name]}, this one "
                f"{digest}); one run uses one pack per name"
            ]
        )
    slugs = {t.slug: p.name for p in POOLS.values() for t in p.templates}
    clash = sorted(t.slug for t in pool.templates if t.slug in slugs)
    if clash:
        raise PackError([f"{name}: template {s}: slug: also in the {slugs[s]} pack" for s in clash])
    POOLS[name] = pool
    DIGESTS[name] = digest
    _version[0] += 1
    return digest


def forget(name: str) -> None:
    """Unload a registered file pack (built-in packs stay)."""
    if name in DIGESTS:
        del POOLS[name], DIGESTS[name]
        _version[0] += 1
