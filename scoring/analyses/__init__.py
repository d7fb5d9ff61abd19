"""The report's analyses: the paper's tables beyond the ladder, and ours (pure)."""

__all__: list[str] = []
