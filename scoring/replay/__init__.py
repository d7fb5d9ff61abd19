"""Replaying one logged episode against its regenerated ground truth (pure)."""

__all__: list[str] = []
