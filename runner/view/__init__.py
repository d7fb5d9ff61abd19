"""``ladder view``: the run's cells, episodes and turns on a local page (aiohttp on loopback,
static files in ``static/``), over a cached index of the run's logs."""

from runner.view.data import RunView
from runner.view.index import RunIndex

__all__ = ["RunIndex", "RunView"]
