"""The cyclic garbage collector paused around bulk work on records (:func:`paused_gc`).

Loading and scoring a grid builds millions of small objects that never form cycles; the
cyclic garbage collector would walk all of them again and again (more than doubling the time
to read a 10,000-episode log). :func:`paused_gc` pauses it around such bulk work; reference
counting still frees everything as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (restored afterwards)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
