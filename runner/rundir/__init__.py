"""The run directory: its lock, manifest, logs, results, and offline rescoring of its logs."""

__all__: list[str] = []
