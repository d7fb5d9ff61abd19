"""The embedded scripted OpenAI-compatible endpoint and the launch recipes for real models.

Nothing in ``protocol/`` or ``scoring/`` imports this package.
"""

from serve.config import FaultConfig, LatencyConfig, ServerConfig
from serve.endpoint.app import start_server, stop_server

__all__ = [
    "FaultConfig",
    "LatencyConfig",
    "ServerConfig",
    "start_server",
    "stop_server",
]
