"""Result lines, cells and ladders, Holm families and statistics (pure)."""

__all__: list[str] = []
