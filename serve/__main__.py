"""``python -m serve scripted --port 0``: the same commands as ``ladder serve``."""

from serve.cli import serve_app

__all__: list[str] = []

serve_app()
