"""The held-out rewriter (Appendix A.5): paraphrases of the asks by a model."""

__all__: list[str] = []
