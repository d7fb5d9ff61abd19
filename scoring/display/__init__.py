"""The typed views ``ladder show`` and ``ladder view`` draw (pure)."""

__all__: list[str] = []
