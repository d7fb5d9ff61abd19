"""``ladder view``: the run's cells, episodes and turns on a local page (aiohttp on loopback,
static files in ``static/``), over a cached index of the run's logs."""

__all__: list[str] = []
