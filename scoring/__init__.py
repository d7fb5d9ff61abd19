"""Pure scoring: replay logged episodes against regenerated ground truth, strict and
decline-aware success, the six error channels, statistics, aggregation by cell and ladder,
the streaming scorer, and report tables. No model, no I/O (plots: :mod:`scoring.report.markdown`).
"""

__all__: list[str] = []
