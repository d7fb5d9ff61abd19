"""Loading a held-out paraphrase cache (tier 2, Appendix A.5) for a grid run.

The file is JSON (``protocol.episode.generate.Paraphrases``); for generator version 3 it is checked
against every domain of the grid by :func:`protocol.episode.paraphrases.check_paraphrases`, and each
problem is one line of the error.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import msgspec

from protocol.domains.known import POOLS
from protocol.episode.paraphrases import check_paraphrases
from protocol.episode.versions import Paraphrases
from protocol.nesting import json_loads
from runner.files import MAX_FILE_BYTES, read_regular

__all__ = ["MAX_CACHE_BYTES", "ParaphraseCacheError", "load_paraphrases", "read_paraphrase_file"]

# 3 rewrites of every wording of a domain are some 100 KiB; 64 MiB is far above any cache
MAX_CACHE_BYTES = MAX_FILE_BYTES

_MAX_LISTED = 20


class ParaphraseCacheError(ValueError):
    """A cache that cannot be used; the message is one line per problem."""


def read_paraphrase_file(path: Path) -> object:
    """The decoded JSON of the cache file ``path``: a regular file (a FIFO or a device is
    refused, never blocked on), at most :data:`MAX_CACHE_BYTES`, nested at most
    :data:`protocol.nesting.MAX_NESTING` deep; :class:`ParaphraseCacheError` otherwise."""
    try:
        return json_loads(read_regular(path, cap=MAX_CACHE_BYTES))
    except FileNotFoundError:
        raise ParaphraseCacheError(
            f"cannot read paraphrase cache {path}: no such file "
            f"(write it with `ladder paraphrase --model M --out {path}`; for a scripted run, "
            f"`ladder paraphrase --model scripted/perfect --base-url embedded --out {path}`)"
        ) from None
    except (OSError, msgspec.DecodeError) as e:
        raise ParaphraseCacheError(f"cannot read paraphrase cache {path}: {e}") from None


def load_paraphrases(path: Path, domains: Iterable[str], generator: int) -> Paraphrases:
    data = read_paraphrase_file(path)
    if not isinstance(data, dict):
        raise ParaphraseCacheError(f"{path}: the cache must be a JSON object")
    if generator >= 3:
        problems = [p for d in domains if d in POOLS for p in check_paraphrases(data, POOLS[d])]
        if problems:
            listed = [f"{path}: {p}" for p in problems[:_MAX_LISTED]]
            if len(problems) > _MAX_LISTED:
                listed.append(f"{path}: ... {len(problems) - _MAX_LISTED} more problems")
            raise ParaphraseCacheError("\n".join(listed))
    return data
