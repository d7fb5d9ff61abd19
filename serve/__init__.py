"""The embedded scripted OpenAI-compatible endpoint and the launch recipes for real models.

Nothing in ``protocol/`` or ``scoring/`` imports this package.
"""

from serve.app import build_app, start_server, stop_server
from serve.config import FaultConfig, LatencyConfig, ServerConfig
from serve.models import BASE_MODELS, ModelSpec, parse_model

__all__ = [
    "BASE_MODELS",
    "FaultConfig",
    "LatencyConfig",
    "ModelSpec",
    "ServerConfig",
    "build_app",
    "parse_model",
    "start_server",
    "stop_server",
]
