"""Reproducible measurements; each case module prints one table and one JSON line."""

__all__: list[str] = []
