"""The cyclic collector while a long-lived asyncio process serves (#50): :func:`young_collector`.

A run's client and the scripted endpoint serving it allocate tracked objects by the hundred
per request (transcripts, parsed bodies, futures) and keep many of them until their episode
or conversation ends. At Python's first threshold (700 allocations) the collector runs every
few requests, promotes what is still alive and now and then walks the whole heap, modules
included: a pause during which every reply waits, and a saturated server's slots idle. So
for the block (a run, a server's life) what exists before it (modules, the grid, the app)
is frozen out of the collector's walks and the first generation is collected every
``YOUNG_THRESHOLD`` allocations; both are restored afterwards. Reference counting frees
everything as usual; the collector still runs, only less often (our choice, docs/cli.md
"The collector"; the paper is silent).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["YOUNG_THRESHOLD", "young_collector"]

# Python's default is 700: 567 young collections, 51 middle and 4 full in one 48 s run of
# 288 episodes (bench saturation, C = 256). In that run's steady window (about 10,500
# requests; thread CPU in the collector, which no load moves): 10,000 -> 10-11 collections,
# 200-221 ms; 50,000 -> 2, 67-73 ms (more of what is young dies before it is walked);
# 100,000 -> 1, 46 ms. The garbage a young pass would have found (cycles) waits longer:
# at most this many objects, a few MB.
YOUNG_THRESHOLD = 50_000


@contextmanager
def young_collector() -> Iterator[None]:
    """For the block: the objects that exist now frozen out of the collector's walks (unless
    a caller froze its own already), the first threshold at least ``YOUNG_THRESHOLD``; both
    restored after, so nested blocks (an embedded server inside a run) undo in order."""
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    if not frozen:  # a caller's own freeze is left as it is
        gc.freeze()
    gc.set_threshold(max(threshold[0], YOUNG_THRESHOLD), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        if not frozen:
            gc.unfreeze()
