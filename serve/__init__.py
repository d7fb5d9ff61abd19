"""The embedded scripted OpenAI-compatible endpoint and the launch recipes for real models.

Nothing in ``protocol/`` or ``scoring/`` imports this package. It is light on purpose: the
endpoint (aiohttp, numpy) is :mod:`serve.endpoint.app`, imported by who starts it, so a
command that only reads :mod:`serve.config` does not pay for it (#49 item 6, #50).
"""

from serve.config import FaultConfig, LatencyConfig, ServerConfig

__all__ = [
    "FaultConfig",
    "LatencyConfig",
    "ServerConfig",
]
