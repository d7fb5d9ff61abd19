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

__all__ = ["ParaphraseCacheError", "load_paraphrases"]

_MAX_LISTED = 20


class ParaphraseCacheError(ValueError):
    """A cache that cannot be used; the message is one line per problem."""


def load_paraphrases(path: Path, domains: Iterable[str], generator: int) -> Paraphrases:
    try:
        data = msgspec.json.decode(path.read_bytes())
    except FileNotFoundError:
        raise ParaphraseCacheError(
            f"cannot read paraphrase cache {path}: no such file "
            f"(write it with `ladder paraphrase --model M --out {path}`; for a scripted run, "
            f"`ladder paraphrase --model scripted/perfect --base-url embedded --out {path}`)"
        ) from None
    except (OSError, msgspec.DecodeError) as e:
        raise ParaphraseCacheError(f"cannot read paraphrase cache {path}: {e}") from None
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
