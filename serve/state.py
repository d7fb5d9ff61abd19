"""What one running scripted server holds: its config, latency model and counters."""

from __future__ import annotations

import time

from aiohttp import web

from serve.config import ServerConfig
from serve.latency import LatencyModel

__all__ = ["SERVER", "ServerState"]


class ServerState:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.latency = LatencyModel(config.latency, config.concurrency, config.seed)
        self.created = int(time.time())
        self.arrivals = 0
        self.faults: dict[str, int] = {}
        self.completed = 0

    def arrival(self) -> int:
        """This request's arrival number (0, 1, ...): the seed of its fault and latency draws."""
        n = self.arrivals
        self.arrivals += 1
        return n

    def count_fault(self, fault: str) -> None:
        self.faults[fault] = self.faults.get(fault, 0) + 1

    def stats(self) -> dict[str, object]:
        return {
            "arrivals": self.arrivals,
            "completed": self.completed,
            "faults": dict(self.faults),
            "in_flight": self.latency.in_flight,
            "max_in_flight": self.latency.max_in_flight,
            "concurrency": self.config.concurrency,
        }


SERVER = web.AppKey("server", ServerState)
