"""The episode generator: every generator version, the graph sampler and schedules, wordings and paraphrases (Section 4.1)."""
