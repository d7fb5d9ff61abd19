"""The Markdown report, its text tables and the paper's figures."""

__all__: list[str] = []
