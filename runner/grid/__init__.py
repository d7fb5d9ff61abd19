"""The grid: its file and schema, seeds, domain packs, paraphrase caches, expansion into cells."""

__all__: list[str] = []
