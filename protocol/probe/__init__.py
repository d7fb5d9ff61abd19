"""The trap-turn probe (Appendix A.4): trap turns of a logged episode and the messages the agent saw."""
